"""Random play through the PettingZoo AEC environments (issue #24: ≥ 50,000 agent steps/s for Back Alley).

    .venv/bin/python benchmarks/aec_env.py [--seconds S] [--rounds R] [--cpu N]

Per game and player count, in the same run, in one thread (``--cpu N`` pins
the process to core N; by default the scheduler places it):

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

The random choice is ``ids[int(random() * len(ids))]`` in all three loops.

Each rate is given twice: per second of wall-clock time, and per second of
this process's CPU time (``time.process_time``) — what one core gives the
loop when nobody else runs on it; on an idle machine the two agree, on a
shared one the wall-clock rate drops with the load.  The measurements
alternate (env, bare, bare+observe, env, …) for ``--rounds`` rounds of
``--seconds`` each and the best round of each is kept, so a burst of load
hits all three alike; the load average and the stolen and idle core time are
printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from machine import cpu_ticks  # benchmarks/machine.py

from referee.env import aec_env
from referee.games import get_game

CONFIGS = [("back-alley", {}), ("schmier", {}), ("pegs-and-jokers", {"players": 4}),
           ("pegs-and-jokers", {"players": 6}), ("pegs-and-jokers", {"players": 8})]


def env_rate(game: str, opts: dict, seconds: float, seed: int) -> tuple[float, float, float]:
    """(agent steps per wall-clock second, per CPU second, engine decisions per CPU second)
    of random play through the environment."""
    env = aec_env(game, **opts)
    rnd = random.Random(seed).random
    steps = 0
    start, cpu = time.perf_counter(), time.process_time()
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
            ids = obs["action_mask"].nonzero()[0]
            step(int(ids[int(rnd() * len(ids))]))
            steps += 1
        decisions += len(raw.decisions)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return steps / elapsed, steps / cpu, decisions / cpu


def bare_rate(game: str, opts: dict, seconds: float, seed: int, observe: bool) -> tuple[float, float]:
    """Engine decisions per wall-clock and per CPU second of random play, optionally with
    ``observe`` of the seat to act."""
    spec = get_game(game)
    options = spec.normalize_options(opts)
    rnd = random.Random(seed).random
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
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
            apply(legal[int(rnd() * len(legal))])
            n += 1
            seat = to_act()
    return n / (time.perf_counter() - start), n / (time.process_time() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measurement (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best is kept (default 3)")
    parser.add_argument("--cpu", type=int, default=None, help="pin to this core (default: no pinning)")
    parser.add_argument("--game", default=None, help="only this game")
    args = parser.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
        print(f"pinned to core {args.cpu}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    idle0, steal0 = cpu_ticks()
    wall0 = time.perf_counter()
    rows = []
    for game, opts in CONFIGS:
        if args.game and game != args.game:
            continue
        env_w = env_c = dec_c = bare_w = bare_c = obs_w = obs_c = 0.0
        for r in range(args.rounds):
            wall, cpu, decisions = env_rate(game, opts, args.seconds, seed=1000 * r + 1)
            env_w = max(env_w, wall)
            if cpu > env_c:
                env_c, dec_c = cpu, decisions
            wall, cpu = bare_rate(game, opts, args.seconds, 1000 * r + 1, observe=False)
            bare_w, bare_c = max(bare_w, wall), max(bare_c, cpu)
            wall, cpu = bare_rate(game, opts, args.seconds, 1000 * r + 1, observe=True)
            obs_w, obs_c = max(obs_w, wall), max(obs_c, cpu)
        label = game + (f" ({opts['players']}p)" if opts else "")
        rows.append((label, env_w, env_c))
        print(f"{label:22} env {env_c:>8,.0f} agent steps/CPU-s ({env_w:>8,.0f}/wall-s; {dec_c:>7,.0f} decisions/CPU-s)"
              f" | bare {bare_c:>8,.0f} decisions/CPU-s ({bare_w:>8,.0f}/wall-s)"
              f" | bare+observe {obs_c:>8,.0f}/CPU-s | env decisions / bare {dec_c / bare_c:.2f}", flush=True)
    idle1, steal1 = cpu_ticks()
    wall = time.perf_counter() - wall0
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; over the run the allowed cores "
          f"were idle {idle1 - idle0:.1f} s and stolen {steal1 - steal0:.1f} s of {wall:.1f} s")
    back_alley = next((r for r in rows if r[0] == "back-alley"), None)
    if back_alley is not None:
        _, wall, cpu = back_alley
        print(f"target: Back Alley ≥ 50,000 agent steps/s on one core: {cpu:,.0f} per CPU second "
              f"({'meets' if cpu >= 50_000 else 'misses'}), {wall:,.0f} per wall-clock second "
              f"({'meets' if wall >= 50_000 else 'misses'})")

if __name__ == "__main__":
    main()
