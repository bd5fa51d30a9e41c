"""Benchmark the Schmier engine with an in-process uniform random policy.

    /work/venv/bin/python benchmarks/engine_schmier.py [--games N] [--seed N]

Plays full games with a uniform random policy over legal_actions and prints
games/s, decisions/s, µs per decision, deals per game, and a baseline measured
in the same run: the cost of the policy alone, i.e. the same policy over lists
of the same lengths as the legal lists recorded during the run.  The ratio
engine-time / baseline-time says how much the engine costs over the cheapest
possible bot loop.  Standard library + the project only.

The policy is ``legal[int(rng.random() * len(legal))]``: uniform over the
legal list (``random()`` is a multiple of 2**-53 in [0, 1), so each of n ≤ 23
actions gets a share within n * 2**-53 of 1/n) at a third of the cost of
``rng.choice``, which spends most of its time in ``_randbelow``.  The timed
loop also records each legal list's length for the baseline.

Random games are long: random bids are nearly always set (SC-8 subtracts the
bid), scores drift below zero and about half the games only end at the
200-deal guard (RULES 0.7), so a game averages ~115 deals and ~6,900
decisions.  Compare engines by µs per decision, not only games/s.

A second figure from the same run is a ceiling: the same timed loop over a
do-nothing engine that offers the recorded legal lists and applies nothing.
No engine, however fast, plays these games faster than that; it shows how
much of any games/s target is left for the rules themselves.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from referee.games.schmier import SPEC


def random_playout(state, rnd, record) -> None:
    """The timed loop: play ``state`` to the end with ``rnd``; ``record`` each legal list's length."""
    to_act = state.to_act
    legal_actions = state.legal_actions
    apply = state.apply
    while to_act() is not None:
        legal = legal_actions()
        n = len(legal)
        record(n)
        apply(legal[int(rnd() * n)])


def run(games: int, seed: int = 0) -> dict[str, float]:
    options = SPEC.normalize_options({})
    lengths: list[int] = []
    decisions = 0
    deals = 0
    played = 0
    kinds: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    t0 = time.perf_counter()
    c0 = time.process_time()
    for g in range(games):
        state, _ = SPEC.new_game(seed + g, options)
        random_playout(state, random.Random(10_000 + seed + g).random, lengths.append)
        decisions = len(lengths)
        deals += state.deal
        played += state.played
        statuses[state.outcome().status + "/" + state.outcome().reason] += 1
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - c0

    # Baseline: the policy alone over lists of the recorded lengths.
    lists = {n: [str(i) for i in range(n)] for n in set(lengths)}
    sequence = [lists[n] for n in lengths]
    rnd = random.Random(seed).random
    t1 = time.perf_counter()
    for legal in sequence:
        legal[int(rnd() * len(legal))]
    baseline = time.perf_counter() - t1

    # Ceiling: the same loop over a do-nothing engine with the same number of
    # decisions per game and the same legal-list lengths; no engine can beat it.
    ceiling = _null_engine_seconds(sequence, games, seed)

    # Per decision kind (a second, separate pass on a few games).
    kind_time: Counter[str] = Counter()
    for g in range(min(games, 100)):
        state, _ = SPEC.new_game(seed + g, options)
        rnd = random.Random(10_000 + seed + g).random
        while state.to_act() is not None:
            k = state.decision()
            a = time.perf_counter()
            legal = state.legal_actions()
            state.apply(legal[int(rnd() * len(legal))])
            kind_time[k] += time.perf_counter() - a
            kinds[k] += 1

    return {
        "games": games,
        "elapsed": elapsed,
        "cpu": cpu,
        "decisions": decisions,
        "deals": deals,
        "played": played,
        "baseline": baseline,
        "ceiling": ceiling,
        "kinds": kinds,
        "kind_time": kind_time,
        "statuses": statuses,
    }


class _NullState:
    """The engine calls of ``random_playout``, doing nothing but replaying recorded legal lists."""

    __slots__ = ("_lists", "_i", "_n")

    def __init__(self, lists: list[list[str]]) -> None:
        self._lists, self._i, self._n = lists, 0, len(lists)

    def to_act(self) -> int | None:
        return 0 if self._i < self._n else None

    def legal_actions(self) -> list[str]:
        return self._lists[self._i]

    def apply(self, action: str) -> list:
        self._i += 1
        return []


def _null_engine_seconds(sequence: list[list[str]], games: int, seed: int) -> float:
    """Wall time of ``random_playout`` over ``_NullState`` games replaying the
    recorded legal lists (cut into ``games`` equal runs)."""
    per_game = max(1, len(sequence) // games)
    chunks = [sequence[i:i + per_game] for i in range(0, len(sequence), per_game)]
    t0 = time.perf_counter()
    for g, chunk in enumerate(chunks):
        random_playout(_NullState(chunk), random.Random(10_000 + seed + g).random, [].append)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    r = run(args.games, args.seed)
    games, elapsed, decisions = r["games"], r["elapsed"], r["decisions"]
    engine = elapsed - r["baseline"]
    print(f"schmier: {games} games in {elapsed:.2f} s (random policy, engine + policy)")
    print(f"  games/s            {games / elapsed:10.1f}   (engine alone, baseline removed: {games / engine:.1f})")
    print(f"  decisions/s        {decisions / elapsed:10.0f}")
    print(f"  µs per decision    {1e6 * elapsed / decisions:10.2f}")
    print(f"  games/s (CPU time) {games / r['cpu']:10.1f}   (wall time suffers when the cores are shared)")
    print(f"  decisions per game {decisions / games:10.1f}")
    print(f"  deals per game     {r['deals'] / games:10.2f}   (played: {r['played'] / games:.2f})")
    print(f"  deals/s            {r['deals'] / elapsed:10.0f}")
    print(f"  baseline (policy)  {r['baseline']:10.3f} s   µs/decision {1e6 * r['baseline'] / decisions:.2f}")
    print(f"  ratio engine-time / baseline-time: {engine / r['baseline']:.1f}")
    print(f"  ceiling: a do-nothing engine in the same loop, same decisions: {games / r['ceiling']:.1f} games/s "
          f"({1e6 * r['ceiling'] / decisions:.2f} µs/decision); ratio engine / ceiling "
          f"{(games / elapsed) / (games / r['ceiling']):.2f}")
    print("  per decision kind (µs, legal_actions + apply, first 100 games):")
    for k, n in sorted(r["kinds"].items()):
        print(f"    {k:15s} {n:8d}  {1e6 * r['kind_time'][k] / n:7.2f}")
    print("  outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(r["statuses"].items())))


if __name__ == "__main__":
    main()
