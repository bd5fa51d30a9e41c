"""A policy bot through ``protocol.bot.run_policy``: a fixed function of the observation and mask."""

import sys

import numpy as np

from protocol.bot import run_policy


def policy(obs: np.ndarray, mask: np.ndarray) -> int:
    """Depends on every entry of the observation, so any difference in the encoding shows."""
    legal = np.flatnonzero(mask)
    weights = np.arange(1, len(obs) + 1, dtype=np.int64)
    return int(legal[int(obs.astype(np.int64) @ weights) % len(legal)])


if __name__ == "__main__":
    sys.exit(run_policy(policy, name="policy"))
