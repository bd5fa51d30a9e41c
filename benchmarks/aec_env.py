"""Random play through the PettingZoo AEC environments (issue #24: ≥ 50,000 agent steps/s for Back Alley).

    .venv/bin/python benchmarks/aec_env.py [--seconds S] [--rounds R] [--cpu N]

Per game and player count, in the same run and on one core (pinned with
``--cpu``, default the first core this process may use):

* **env**: the loop a learner runs — ``env.last()`` (the agent's observation
  and mask), a uniformly random legal id from the mask, ``env.step(id)`` —
  over whole games from ``reset(seed)``.  An agent step is one ``step`` with
  an id (Pegs and Jokers takes several per move: card, source, destination …;
  its engine decisions per second are printed too).  Dead steps at the end
  (``step(None)``) are not counted.
* **bare**: the engine alone, ``legal_actions()`` and ``apply`` of a random
  one: the ceiling of any environment over it.
* **bare+observe**: the same plus ``observe(seat)`` of the seat to act per
  decision: what the encoding starts from.

The measurements alternate (env, bare, bare+observe, env, …) for ``--rounds``
rounds of ``--seconds`` each and the best round of each is kept, so a burst
of load on the shared machine hits all three alike; the load average and the
stolen and idle core time are printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import numpy as np
from machine import cpu_ticks  # benchmarks/machine.py

from referee.env import aec_env
from referee.games import get_game

CONFIGS = [("back-alley", {}), ("schmier", {}), ("pegs-and-jokers", {"players": 4}),
           ("pegs-and-jokers", {"players": 6}), ("pegs-and-jokers", {"players": 8})]


def env_rate(game: str, opts: dict, seconds: float, seed: int) -> tuple[float, float]:
    """(agent steps/s, engine decisions/s) of random play through the environment."""
    env = aec_env(game, **opts)
    rng = random.Random(seed)
    randrange = rng.randrange
    flatnonzero = np.flatnonzero
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    game_seed = seed
    raw = env.unwrapped
    decisions = 0
    while time.perf_counter() < deadline:
        env.reset(seed=game_seed)
        game_seed += 1
        last, step = env.last, env.step
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = last()
            if term or trunc:
                step(None)
                continue
            ids = flatnonzero(obs["action_mask"])
            step(int(ids[randrange(len(ids))]))
            steps += 1
        decisions += len(raw.decisions)
    elapsed = time.perf_counter() - start
    return steps / elapsed, decisions / elapsed


def bare_rate(game: str, opts: dict, seconds: float, seed: int, observe: bool) -> float:
    """Engine decisions/s of random play, optionally with ``observe`` of the seat to act."""
    spec = get_game(game)
    options = spec.normalize_options(opts)
    rng = random.Random(seed)
    randrange = rng.randrange
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    game_seed = seed
    while time.perf_counter() < deadline:
        state, _ = spec.new_game(game_seed, options)
        game_seed += 1
        to_act, legal_actions, apply, look = state.to_act, state.legal_actions, state.apply, state.observe
        seat = to_act()
        while seat is not None:
            if observe:
                look(seat)
            legal = legal_actions()
            apply(legal[randrange(len(legal))])
            n += 1
            seat = to_act()
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measurement (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best is kept (default 3)")
    parser.add_argument("--cpu", type=int, default=None, help="the core to pin to (default: the first allowed)")
    parser.add_argument("--game", default=None, help="only this game")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        print(f"pinned to core {cpu}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    idle0, steal0 = cpu_ticks()
    wall0 = time.perf_counter()
    rows = []
    for game, opts in CONFIGS:
        if args.game and game != args.game:
            continue
        env_best, dec_best, bare_best, obs_best = 0.0, 0.0, 0.0, 0.0
        for r in range(args.rounds):
            steps, decisions = env_rate(game, opts, args.seconds, seed=1000 * r + 1)
            if steps > env_best:
                env_best, dec_best = steps, decisions
            bare_best = max(bare_best, bare_rate(game, opts, args.seconds, 1000 * r + 1, observe=False))
            obs_best = max(obs_best, bare_rate(game, opts, args.seconds, 1000 * r + 1, observe=True))
        label = game + (f" ({opts['players']}p)" if opts else "")
        rows.append((label, env_best, dec_best, bare_best, obs_best))
        print(f"{label:24} env {env_best:>9,.0f} agent steps/s ({dec_best:>8,.0f} decisions/s) | "
              f"bare {bare_best:>9,.0f} decisions/s | bare+observe {obs_best:>9,.0f}/s | "
              f"env/bare {dec_best / bare_best:.2f}", flush=True)
    idle1, steal1 = cpu_ticks()
    wall = time.perf_counter() - wall0
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; over the run the allowed cores "
          f"were idle {idle1 - idle0:.1f} s and stolen {steal1 - steal0:.1f} s of {wall:.1f} s")
    back_alley = next((r for r in rows if r[0] == "back-alley"), None)
    if back_alley is not None:
        verdict = "meets" if back_alley[1] >= 50_000 else "misses"
        print(f"target: Back Alley ≥ 50,000 agent steps/s through the env: {back_alley[1]:,.0f} ({verdict})")


if __name__ == "__main__":
    main()
