#!/usr/bin/env python3
"""The random bot again, written with the ``protocol.bot`` helper.

A bot is a function from a request to one of its legal actions; ``run`` does
the rest of the protocol.  Needs the project installed in this Python
(``pip install -e .``); for a bot with no dependencies at all see
``random_bot.py``.  Usage: python_random_bot.py [SEED] (``{seed}`` in a bot command fills it in).
"""

import random
import sys

from protocol.bot import Request, run

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else None)


def decide(request: Request) -> str:
    return rng.choice(request.legal)


if __name__ == "__main__":
    sys.exit(run(decide, name="python-random"))
