"""Shared helpers of the referee.env tests."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np

#: Every game and player count the environments cover.
CONFIGS: list[tuple[str, dict]] = [
    ("back-alley", {}),
    ("schmier", {}),
    ("pegs-and-jokers", {"players": 4}),
    ("pegs-and-jokers", {"players": 6}),
    ("pegs-and-jokers", {"players": 8}),
]
#: Shorter games of the same configurations, for tests that play whole games.
SHORT: dict[str, dict] = {"back-alley": {}, "schmier": {"max_deals": 3}, "pegs-and-jokers": {"max_turns": 150}}


def config_id(config: tuple[str, dict]) -> str:
    game, opts = config
    return game + "".join(f"-{k}{v}" for k, v in opts.items())


def random_steps(env, rng: random.Random, limit: int = 10**9) -> Iterator[tuple[str, int]]:
    """Play ``env`` (already reset) with random legal ids; yield each (agent, id) before it is stepped."""
    for n, agent in enumerate(env.agent_iter()):
        if n >= limit:
            return
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        ids = np.flatnonzero(obs["action_mask"])
        a = int(ids[rng.randrange(len(ids))])
        yield agent, a
        env.step(a)
