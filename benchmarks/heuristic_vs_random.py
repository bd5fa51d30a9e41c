"""How often the heuristic bots beat the random bot (the target is ≥ 85 % of games).

    /work/venv/bin/python benchmarks/heuristic_vs_random.py [--deals N] [--jobs 2]
        [--game back-alley --game schmier --game pegs-and-jokers] [--seed 1]
        [--output runs/heuristic-vs-random]

Each game type is a ``referee run`` tournament (real bot processes, duplicate
deals, records, standings with Wilson intervals) whose output directory is
kept, so a stopped run resumes and every game can be replayed.  The measure
is the heuristic entrant's **win rate**: the share of games its team won.

* Back Alley: ``heuristic`` (one team, two processes) against ``random``
  (``sample_bots/random_bot.py``): 1 pairing × N deals × 2 seatings.
* Schmier: ``heuristic`` against two random entrants, ``random-a`` and
  ``random-b`` (three teams of two): 1 triple × N deals × 6 seatings.  The
  heuristic team must be the sole winner of a game, so chance is 1/3.
* Pegs and Jokers, 4 players: ``heuristic`` against ``random``, as Back Alley.

The default deal counts give at least 200 games per game type (100 deals × 2
seatings; 34 deals × 6 seatings).  Draws and aborts count as not won; a
forfeit by either side is listed.  Each game's bots get their own seed from
the tournament (``{seed}``), so a run is reproducible from ``--seed``.

Last run (``--seed 1 --jobs 2``, 2 cores, about 4 minutes)::

    game             games   won drawn   lost    rate  95% Wilson       score diff
    back-alley         200   200     0      0  100.0%  [98.1%, 100.0%]     +1225.3
    schmier            204   204     0      0  100.0%  [98.2%, 100.0%]       +38.6
    pegs-and-jokers    200   200     0      0  100.0%  [98.1%, 100.0%]        +8.3

(no forfeits; "score diff" is the heuristic team's score minus the mean of
the other teams', per game, from the standings.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
REFEREE = [PY, "-m", "referee_cli.main"]
RANDOM = f"{PY} {ROOT / 'sample_bots' / 'random_bot.py'} {{seed}}"
HEURISTIC = {
    "back-alley": f"{PY} {ROOT / 'sample_bots' / 'heuristic' / 'back_alley.py'}",
    "schmier": f"{PY} {ROOT / 'sample_bots' / 'heuristic' / 'schmier.py'}",
    "pegs-and-jokers": f"{PY} {ROOT / 'sample_bots' / 'heuristic' / 'pegs_and_jokers.py'}",
}
#: random entrants per game (one per other team), extra flags, default deals (≥ 200 games)
OPPONENTS = {"back-alley": ["random"], "schmier": ["random-a", "random-b"], "pegs-and-jokers": ["random"]}
EXTRA = {"back-alley": [], "schmier": [], "pegs-and-jokers": ["--players", "4"]}
DEALS = {"back-alley": 100, "schmier": 34, "pegs-and-jokers": 100}


def run_tournament(game: str, deals: int, seed: int, jobs: int, output: Path) -> dict:
    entrants = [f"heuristic={HEURISTIC[game]}"] + [f"{name}={RANDOM}" for name in OPPONENTS[game]]
    argv = [*REFEREE, "run", "--game", game, *EXTRA[game], "-n", str(deals), "--seed", str(seed),
            "--jobs", str(jobs), "--output", str(output), "--decision-ms", "2000", "-q"]
    for entrant in entrants:
        argv += ["-e", entrant]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"referee run failed for {game} (exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return json.loads((output / "standings.json").read_text())


def summary(game: str, standings: dict) -> str:
    me = next(e for e in standings["entrants"] if e["name"] == "heuristic")
    rate = me["win_rate"]
    others = [e for e in standings["entrants"] if e["name"] != "heuristic"]
    forfeits = sum(e["forfeits"] for e in standings["entrants"])
    rivals = ", ".join(f"{e['name']} {e['wins']}" for e in others)
    return (
        f"{game:<16} {me['games']:>5} {me['wins']:>5} {me['draws']:>5} {me['losses']:>6} "
        f"{rate['value']:>7.1%}  [{rate['lo']:.1%}, {rate['hi']:.1%}]  "
        f"{me['score_diff']['value']:>+10.1f}  "
        f"{rivals:<24} {forfeits}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", action="append", choices=sorted(HEURISTIC),
                        help="game type (repeatable; default all three)")
    parser.add_argument("--deals", type=int, help="deals per game type (default: ≥ 200 games each)")
    parser.add_argument("--seed", type=int, default=1, help="tournament seed")
    parser.add_argument("--jobs", type=int, default=2, help="games played at once")
    parser.add_argument("--output", type=Path, default=ROOT / "runs" / "heuristic-vs-random",
                        help="parent folder of the tournaments' output directories")
    args = parser.parse_args()
    lines = [
        f"{'game':<16} {'games':>5} {'won':>5} {'drawn':>5} {'lost':>6} {'rate':>7}  {'95% Wilson':<16} "
        f"{'score diff':>10}  {'random entrants won':<24} forfeits",
    ]
    for game in args.game or list(HEURISTIC):
        started = time.perf_counter()
        output = args.output / f"{game}-seed{args.seed}"
        standings = run_tournament(game, args.deals or DEALS[game], args.seed, args.jobs, output)
        lines.append(summary(game, standings))
        print(f"{game}: {time.perf_counter() - started:.0f}s, standings in {output}", file=sys.stderr)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
