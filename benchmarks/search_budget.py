"""How much the search bots search in their budget, and how well they keep to it.

    .venv/bin/python benchmarks/search_budget.py [--budget-ms 100] [--decisions 60]
        [--game back-alley --game schmier --game pegs-and-jokers] [--players 4] [--seed 1]

In process, no referee: for each game, positions come from a game the heuristic
bot plays for every seat (seeded); at every decision with more than one legal
action, until ``--decisions`` of them, the search bot (sample_bots/search/, its
``decide`` as the protocol helper calls it) decides the same request. Printed
per game: the search's decision time (mean, max; the budget is the target), the
samples ("worlds") and rollouts per decision, and the heuristic bot's time on
the same requests as the baseline (the ratio says what a search costs). The
machine's load (``uptime``) is printed first: the budget is wall-clock time, so
a loaded machine gets fewer rollouts, not longer decisions.

The ladder runs' times, with the referee's transport included, are in
docs/reference-bots.md.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sample_bots" / "search"))

import pimc  # noqa: E402

from protocol.bot import Request  # noqa: E402

MODULES = {"back-alley": "back_alley", "schmier": "schmier", "pegs-and-jokers": "pegs_and_jokers"}


def measure(game: str, options: dict, budget_ms: int, decisions: int, seed: int) -> dict:
    mod = importlib.import_module(MODULES[game])
    heuristic = mod.heuristic
    results: list[pimc.SearchResult] = []
    real_pimc = mod.pimc

    def counting_pimc(*a, **k):  # type: ignore[no-untyped-def]
        r = real_pimc(*a, **k)
        results.append(r)
        return r

    mod.pimc = counting_pimc
    args = pimc.parse_args(game, ["--budget-ms", str(budget_ms), "--seed", str(seed)])
    choose = None
    bot = pimc.SearchBot(game, args, lambda *a: choose(*a), heuristic.decide)  # type: ignore[misc]
    choose = mod.make_choose(bot.spec, mod.HORIZON) if game == "pegs-and-jokers" else mod.make_choose(bot.spec)
    spec = bot.spec
    opts = spec.normalize_options(options)
    hello = {"game": game, "options": opts}
    search_ms: list[float] = []
    heuristic_ms: list[float] = []
    g = seed
    while len(search_ms) < decisions:
        state, events = spec.new_game(g, opts)
        seen = {s: [e.data for e in events if e.visible_to(s)] for s in range(spec.num_seats(opts))}
        n = 0
        while state.to_act() is not None and len(search_ms) < decisions:
            seat = state.to_act()
            n += 1
            req = Request(n, seat, state.decision(), state.observe(seat), state.legal_actions(), 1000, hello)
            t = time.perf_counter()
            action = heuristic.decide(req)
            h_ms = 1000 * (time.perf_counter() - t)
            if len(req.legal) > 1:
                bot.on_hello(hello)
                bot.events[0] = list(seen[seat])
                t = time.perf_counter()
                bot.decide(req)
                search_ms.append(1000 * (time.perf_counter() - t))
                heuristic_ms.append(h_ms)
            for e in state.apply(action):
                for s in seen:
                    if e.visible_to(s):
                        seen[s].append(e.data)
        g += 1
    mod.pimc = real_pimc
    return {
        "mean": statistics.mean(search_ms), "max": max(search_ms),
        "worlds": statistics.mean(r.worlds for r in results) if results else 0.0,
        "rollouts": statistics.mean(r.rollouts for r in results) if results else 0.0,
        "searched": len(results), "heuristic": statistics.mean(heuristic_ms),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budget-ms", type=int, default=100)
    p.add_argument("--decisions", type=int, default=60)
    p.add_argument("--game", action="append", choices=sorted(MODULES))
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"budget {a.budget_ms} ms; {a.decisions} decisions with a choice per game\n")
    print(f"{'game':<22}{'mean ms':>9}{'max ms':>9}{'searched':>10}{'worlds':>8}{'rollouts':>10}"
          f"{'heuristic ms':>14}{'ratio':>8}")
    for game in a.game or sorted(MODULES):
        options = {"players": a.players} if game == "pegs-and-jokers" else {}
        r = measure(game, options, a.budget_ms, a.decisions, a.seed)
        label = f"{game} ({a.players})" if game == "pegs-and-jokers" else game
        print(f"{label:<22}{r['mean']:>9.1f}{r['max']:>9.1f}{r['searched']:>10}{r['worlds']:>8.1f}"
              f"{r['rollouts']:>10.1f}{r['heuristic']:>14.2f}{r['mean'] / r['heuristic']:>8.0f}")
    print("\n'searched': decisions the search ran on (the others: the heuristic's rules, e.g. Schmier's"
          " bids and exchange, or one candidate); worlds and rollouts per searched decision.")


if __name__ == "__main__":
    main()
