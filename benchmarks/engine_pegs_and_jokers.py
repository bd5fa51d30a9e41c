"""Benchmark the Pegs and Jokers engine with an in-process uniform random policy.

    /work/venv/bin/python benchmarks/engine_pegs_and_jokers.py [--games N] [--games8 M] [--seed S]

Part 1 plays N full 4-player games (random.Random(seed).choice over
legal_actions) and prints games/s, decisions/s, µs per decision, turns per
game, and a baseline measured in the same run: the cost of the policy alone
(random.choice over lists of the same lengths as the legal lists recorded
during the run), with the ratio engine-time / baseline-time.  Targets:
>= 20 games/s for the engine alone.  CPU time (``time.process_time``) is
shown too: on a shared, noisy machine it varies less than wall time.

Part 2 plays M full 8-player games and times legal-move generation alone
(``legal_actions()`` on a fresh decision) per decision; it prints the median
and other percentiles.  Target: median <= 100 µs.

Standard library + the project only.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter

from referee.games.pegs_and_jokers import SPEC


def run_games(games: int, players: int, seed: int) -> dict:
    options = SPEC.normalize_options({"players": players})
    lengths: list[int] = []
    turns = 0
    statuses: Counter[str] = Counter()
    t0 = time.perf_counter()
    c0 = time.process_time()
    for g in range(games):
        state, _ = SPEC.new_game(seed + g, options)
        choice = random.Random(10_000 + seed + g).choice
        to_act = state.to_act
        legal_actions = state.legal_actions
        apply = state.apply
        while to_act() is not None:
            legal = legal_actions()
            lengths.append(len(legal))
            apply(choice(legal))
        turns += state.turn
        out = state.outcome()
        statuses[f"{out.status}/{out.reason}"] += 1
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0

    lists = {n: [str(i) for i in range(n)] for n in set(lengths)}
    choice = random.Random(seed).choice
    t1 = time.perf_counter()
    for n in lengths:
        choice(lists[n])
    baseline = time.perf_counter() - t1
    return {"games": games, "elapsed": elapsed, "cpu": cpu, "decisions": len(lengths), "turns": turns,
            "baseline": baseline, "statuses": statuses, "lengths": lengths}


def legal_generation_times(games: int, players: int, seed: int) -> list[float]:
    """Seconds spent in legal_actions() per decision (the first call of each decision)."""
    options = SPEC.normalize_options({"players": players})
    times: list[float] = []
    clock = time.perf_counter
    for g in range(games):
        state, _ = SPEC.new_game(seed + g, options)
        choice = random.Random(20_000 + seed + g).choice
        while state.to_act() is not None:
            a = clock()
            legal = state.legal_actions()
            times.append(clock() - a)
            state.apply(choice(legal))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="4-player games (part 1)")
    parser.add_argument("--games8", type=int, default=10, help="8-player games (part 2)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    r = run_games(args.games, 4, args.seed)
    games, elapsed, decisions = r["games"], r["elapsed"], r["decisions"]
    engine = elapsed - r["baseline"]
    print(f"pegs-and-jokers, 4 players: {games} games in {elapsed:.2f} s (random policy, engine + policy)")
    print(f"  games/s            {games / elapsed:10.1f}   (engine alone, baseline removed: "
          f"{games / engine:.1f}; target >= 20)")
    print(f"  decisions/s        {decisions / elapsed:10.0f}")
    print(f"  µs per decision    {1e6 * elapsed / decisions:10.2f}   (engine alone {1e6 * engine / decisions:.2f})")
    print(f"  CPU µs per decision{1e6 * r['cpu'] / decisions:10.2f}   (CPU games/s {games / r['cpu']:.1f})")
    print(f"  turns per game     {r['turns'] / games:10.1f}")
    print(f"  legal list length  {statistics.mean(r['lengths']):10.1f}   mean "
          f"(median {statistics.median(r['lengths']):.0f}, max {max(r['lengths'])})")
    print(f"  baseline (policy)  {r['baseline']:10.3f} s   µs/decision {1e6 * r['baseline'] / decisions:.2f}")
    print(f"  ratio engine-time / baseline-time: {engine / r['baseline']:.1f}")
    print("  outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(r["statuses"].items())))

    times = sorted(legal_generation_times(args.games8, 8, args.seed))
    n = len(times)
    median = statistics.median(times)
    print(f"pegs-and-jokers, 8 players: legal-move generation over {n} decisions of {args.games8} games")
    print(f"  median µs          {1e6 * median:10.1f}   (target <= 100)")
    print(f"  mean µs            {1e6 * sum(times) / n:10.1f}")
    for q in (0.9, 0.99):
        print(f"  p{int(q * 100):<2d} µs            {1e6 * times[min(n - 1, int(q * n))]:10.1f}")
    print(f"  max µs             {1e6 * times[-1]:10.1f}")


if __name__ == "__main__":
    main()
