"""The engines in-process for learning bots: PettingZoo AEC environments (docs/learning.md).

Needs the ``rl`` extra (``pip install 'referee[rl]'``: pettingzoo, gymnasium,
numpy).  ``aec_env(game, **options)`` makes one; the observation encoding and
the action ids are ``protocol.encoding``'s, the ones a trained policy sees
again as a subprocess bot (``protocol.bot.run_policy``).
"""

from __future__ import annotations

from .aec import IllegalActionId, InvalidEnvOption, NotResetError, RefereeAECEnv, aec_env

__all__ = ["IllegalActionId", "InvalidEnvOption", "NotResetError", "RefereeAECEnv", "aec_env"]
