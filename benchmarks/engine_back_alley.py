"""Back Alley engine speed with a uniform random policy (target: ≥ 100 games/s).

    /work/venv/bin/python benchmarks/engine_back_alley.py [--games N] [--seed S]

Plays N full 25-deal games in process, ``random.Random(seed).choice`` over
``legal_actions()`` then ``apply``.  The baseline replays the policy alone
(``choice`` over lists of the recorded lengths) so the engine's share can be
read off: engine time = total - baseline.  Also times ``observe`` (the match
runner builds one per request) on a sample of states.
"""

from __future__ import annotations

import argparse
import random
import time

from referee.games.back_alley import SPEC


def play(games: int, seed: int) -> tuple[float, list[int]]:
    lengths: list[int] = []
    record = lengths.append
    start = time.perf_counter()
    for g in range(games):
        state, _ = SPEC.new_game(seed + g)
        choice = random.Random(seed + g).choice
        to_act, legal_actions, apply = state.to_act, state.legal_actions, state.apply
        while to_act() is not None:
            legal = legal_actions()
            record(len(legal))
            apply(choice(legal))
    return time.perf_counter() - start, lengths


def baseline(lengths: list[int], seed: int) -> float:
    pool = {n: [str(i) for i in range(n)] for n in set(lengths)}
    lists = [pool[n] for n in lengths]
    choice = random.Random(seed).choice
    start = time.perf_counter()
    for legal in lists:
        choice(legal)
    return time.perf_counter() - start


def observe_cost(samples: int, seed: int) -> float:
    state, _ = SPEC.new_game(seed)
    rng = random.Random(seed)
    states = []
    while state.to_act() is not None and len(states) < samples:
        if rng.random() < 0.3:
            states.append((state.clone(), state.to_act()))
        state.apply(rng.choice(state.legal_actions()))
    start = time.perf_counter()
    for s, seat in states:
        s.observe(seat)
    return (time.perf_counter() - start) / max(1, len(states))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    play(5, args.seed + 10_000)  # warm up
    total, lengths = play(args.games, args.seed)
    decisions = len(lengths)
    base = baseline(lengths, args.seed)
    engine = total - base
    print(f"games                {args.games}")
    print(f"decisions            {decisions}  ({decisions / args.games:.1f} per game)")
    print(f"total (with policy)  {total:.3f} s  {args.games / total:.1f} games/s  "
          f"{decisions / total:,.0f} decisions/s  {total / decisions * 1e6:.2f} µs/decision")
    print(f"engine alone         {engine:.3f} s  {args.games / engine:.1f} games/s  "
          f"{engine / decisions * 1e6:.2f} µs/decision (legal_actions + apply, deals included)")
    print(f"policy baseline      {base:.3f} s  {base / decisions * 1e6:.2f} µs/decision")
    print(f"ratio engine/policy  {engine / base:.1f}")
    print(f"observe              {observe_cost(200, args.seed) * 1e6:.1f} µs per call")


if __name__ == "__main__":
    main()
