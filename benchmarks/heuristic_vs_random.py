"""How often the heuristic bots beat the random bot (the target is ≥ 85 % of games).

    /work/venv/bin/python benchmarks/heuristic_vs_random.py [--games 200] [--jobs 2]
        [--game back-alley --game schmier --game pegs-and-jokers] [--seed 1]
        [--records DIR]

Every game is a real match through the referee (``run_match``: bot
processes, pipes, time limits), run ``--jobs`` at a time.  The measure, per
game, is "the heuristic bot's team won the game":

* Back Alley: one heuristic team (two processes) against one team of
  ``sample_bots/random_bot.py``; the heuristic side alternates between team 0
  and team 1 by game.
* Schmier: one heuristic team against two random teams (three teams of two);
  the heuristic side rotates through teams 0, 1, 2.  Winning means the game
  ends with the heuristic team the sole winner, so the chance level is 1/3.
* Pegs and Jokers, 4 players: a heuristic team against a random team,
  alternating sides.

Draws, aborted games and forfeits count as not won, and are listed.  Each
random bot gets its own seed (``1000·game seed + seat``), so a run is
reproducible from ``--seed``.  The report gives wins / games with a 95 %
Wilson score interval.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import trio

from referee.logging import configure_logging
from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits

ROOT = Path(__file__).resolve().parent.parent
RANDOM = (sys.executable, str(ROOT / "sample_bots" / "random_bot.py"))
HEURISTIC = {
    "back-alley": (sys.executable, str(ROOT / "sample_bots" / "heuristic" / "back_alley.py")),
    "schmier": (sys.executable, str(ROOT / "sample_bots" / "heuristic" / "schmier.py")),
    "pegs-and-jokers": (sys.executable, str(ROOT / "sample_bots" / "heuristic" / "pegs_and_jokers.py")),
}
SEATS = {"back-alley": 4, "schmier": 6, "pegs-and-jokers": 4}
TEAMS = {"back-alley": 2, "schmier": 3, "pegs-and-jokers": 2}
OPTIONS = {"back-alley": {}, "schmier": {}, "pegs-and-jokers": {"players": 4}}


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion wins / n."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Tally:
    game: str
    games: int = 0
    wins: int = 0
    other: Counter = field(default_factory=Counter)  # "loss", "draw", "aborted", "forfeit: reason"
    decisions: int = 0
    seconds: float = 0.0
    margins: list[float] = field(default_factory=list)  # heuristic score minus best other score


def lineup(game: str, seed: int) -> tuple[list[BotSpec], int]:
    """The bots of one game (one per seat) and the heuristic team's number."""
    teams = TEAMS[game]
    hteam = seed % teams
    bots = []
    for seat in range(SEATS[game]):
        if seat % teams == hteam:
            bots.append(BotSpec(name="heuristic", command=HEURISTIC[game]))
        else:
            bots.append(BotSpec(name="random", command=(*RANDOM, str(1000 * seed + seat))))
    return bots, hteam


async def play_one(game: str, seed: int, tally: Tally, limiter: trio.CapacityLimiter,
                   records: Path | None) -> None:
    async with limiter:
        bots, hteam = lineup(game, seed)
        record = records / f"{game}-seed{seed}.jsonl" if records else None
        result = await run_match(game, OPTIONS[game], bots, seed=seed, record_path=record,
                                 limits=Limits(decision_s=2.0))
    out = result.outcome
    tally.games += 1
    tally.decisions += result.decisions
    tally.seconds += result.duration_s
    if out.status == "win" and out.winners == (hteam,):
        tally.wins += 1
    elif result.fault is not None:
        who = "heuristic" if bots[result.fault.seat].name == "heuristic" else "random"
        tally.other[f"forfeit by {who}: {result.fault.reason.value}"] += 1
    else:
        tally.other["loss" if out.status == "win" else out.status] += 1
    if out.status in ("win", "draw") and out.scores:
        best_other = max(s for t, s in enumerate(out.scores) if t != hteam)
        tally.margins.append(out.scores[hteam] - best_other)


async def bench(games: list[str], n: int, first_seed: int, jobs: int, records: Path | None) -> list[Tally]:
    limiter = trio.CapacityLimiter(jobs)
    tallies = [Tally(g) for g in games]
    async with trio.open_nursery() as nursery:
        for game, tally in zip(games, tallies):
            for seed in range(first_seed, first_seed + n):
                nursery.start_soon(play_one, game, seed, tally, limiter, records)
    return tallies


def report(tallies: list[Tally], wall: float) -> str:
    lines = [
        f"{'game':<16} {'games':>5} {'heuristic wins':>14} {'rate':>7}  {'95% Wilson':<15} "
        f"{'mean margin':>11}  other",
    ]
    for t in tallies:
        lo, hi = wilson(t.wins, t.games)
        margin = sum(t.margins) / len(t.margins) if t.margins else float("nan")
        other = ", ".join(f"{k} {v}" for k, v in sorted(t.other.items())) or "-"
        lines.append(
            f"{t.game:<16} {t.games:>5} {t.wins:>14} {t.wins / max(1, t.games):>7.1%}  "
            f"[{lo:.1%}, {hi:.1%}]  {margin:>11.1f}  {other}"
        )
    lines.append(f"wall time {wall:.0f}s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games per game type")
    parser.add_argument("--game", action="append", choices=sorted(HEURISTIC),
                        help="game type (repeatable; default all three)")
    parser.add_argument("--seed", type=int, default=1, help="first game seed")
    parser.add_argument("--jobs", type=int, default=2, help="games played at once")
    parser.add_argument("--records", type=Path, help="write each game's record into this folder")
    args = parser.parse_args()
    games = args.game or ["back-alley", "schmier", "pegs-and-jokers"]
    configure_logging("warning")
    started = time.perf_counter()
    tallies = trio.run(bench, games, args.games, args.seed, args.jobs, args.records)
    print(report(tallies, time.perf_counter() - started))


if __name__ == "__main__":
    main()
