#!/usr/bin/env python3
"""The learned Back Alley bidding policy as a bot: ``policy_bot.py [POLICY.json]``.

Trained by ``train.py`` (docs/learning.md); entered in ``referee run``
unchanged through ``protocol.bot.run_policy``, which gives the policy the
observation and mask ``referee.env`` gave it in training.  Without a policy
file it plays untrained (every bid from the fallback estimate).  Needs NumPy
in the bot's Python (``pip install -e '.[rl]'``, or the ``test`` extra).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bidding import BiddingPolicy  # noqa: E402  (beside this file)

from protocol.bot import run_policy  # noqa: E402

if __name__ == "__main__":
    policy = BiddingPolicy.load(Path(sys.argv[1])) if len(sys.argv) > 1 else BiddingPolicy()
    sys.exit(run_policy(policy, name="learned-bidding" if len(sys.argv) > 1 else "untrained-bidding"))
