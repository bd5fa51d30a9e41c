"""Determinizer speed per game: samples per second (issue #23).

    .venv/bin/python benchmarks/determinize.py [--views N] [--samples K] [--seed S]

For each game (Pegs and Jokers at 4, 6 and 8 players) it plays random games
and keeps N views taken at random decision points (the seat to act's view
with the events it was sent, as a search bot asks for it), then times K samples of each view with
``spec.determinize``.  The baseline, measured in the same run, is the
engine's own ``new_game`` rate (a fresh shuffled deal is the cheapest "full
state" an engine makes); the ratio says how many ``new_game`` calls one
sample costs.  Prints ``uptime``'s load first: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import random
import time

from referee.games import GAMES, View

CONFIGS = [
    ("back-alley", {}),
    ("schmier", {}),
    ("pegs-and-jokers", {"players": 4}),
    ("pegs-and-jokers", {"players": 6}),
    ("pegs-and-jokers", {"players": 8}),
]


def views(name: str, options: dict, count: int, seed: int) -> list[View]:
    spec = GAMES[name]
    opts = spec.normalize_options(options)
    rng = random.Random(seed)
    out: list[View] = []
    g = 0
    while len(out) < count:
        state, events = spec.new_game(seed + g, opts)
        seen = [[e.data for e in events if e.visible_to(s)] for s in range(state.num_seats)]
        g += 1
        steps = 0
        while state.to_act() is not None and len(out) < count and steps < 3000:
            if rng.random() < 0.05:
                seat = state.to_act()
                out.append(View(seat, opts, state.observe(seat), tuple(seen[seat])))
            events = state.apply(rng.choice(state.legal_actions()))
            for s in range(state.num_seats):
                seen[s].extend(e.data for e in events if e.visible_to(s))
            steps += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--views", type=int, default=200)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("load (uptime):", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'game':<22} {'samples/s':>10} {'µs/sample':>10} {'new_game/s':>11} {'ratio':>7}")
    for name, options in CONFIGS:
        spec = GAMES[name]
        opts = spec.normalize_options(options)
        vs = views(name, options, args.views, args.seed)
        rng = random.Random(args.seed)
        start = time.perf_counter()
        for v in vs:
            for _ in range(args.samples):
                spec.determinize(v, rng)
        elapsed = time.perf_counter() - start
        n = len(vs) * args.samples
        games = max(200, n // 4)
        start = time.perf_counter()
        for g in range(games):
            spec.new_game(g, opts)
        base = time.perf_counter() - start
        label = name if not options else f"{name} ({options['players']})"
        print(f"{label:<22} {n / elapsed:>10.0f} {1e6 * elapsed / n:>10.1f} {games / base:>11.0f}"
              f" {(n / elapsed) / (games / base):>7.2f}")


if __name__ == "__main__":
    main()
