"""What linking report.html to each game's HTML replay costs: ``write_html_report``
with and without making the replay pages, in the same run.

    python benchmarks/report_replays.py [--output OUT] [--runs 3]

Without ``--output`` it first plays the README's Back Alley example (12 games,
``referee run tournaments/examples/back-alley.toml``) into a temporary folder.
Then, in-process, medians of ``--runs``:

* the page alone (``replays=False``): the baseline, what ``report`` cost before;
* the page and every replay page made (none there yet): what ``referee report``
  and a run's own report (up to ``REPLAYS_AT_RUN_END`` games) now cost;
* the page with every replay page kept (newer than its record): a second
  ``report``, or a resumed run's.

Prints the time per game and the pages' size, and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tournaments.html_report import REPLAYS_AT_RUN_END, write_html_report  # noqa: E402


def timed(output: Path, replays: bool, clear: bool) -> float:
    if clear:
        for page in (output / "records").glob("*.html"):
            page.unlink()
    t0 = time.perf_counter()
    write_html_report(output, output / "report.html", replays=replays)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", type=Path, help="a finished tournament's output folder")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        output = args.output
        if output is None:
            output = Path(tmp) / "out"
            subprocess.run([sys.executable, "-m", "referee", "run", str(ROOT / "tournaments/examples/back-alley.toml"),
                            "--output", str(output), "--quiet"], check=True, capture_output=True)
        data = json.loads((output / "standings.json").read_text())
        games = data["games_played"]
        base = statistics.median(timed(output, False, True) for _ in range(args.runs))
        make = statistics.median(timed(output, True, True) for _ in range(args.runs))
        size = sum(p.stat().st_size for p in (output / "records").glob("*.html"))
        kept = statistics.median(timed(output, True, False) for _ in range(args.runs))
    print(f"{games} games; medians of {args.runs} runs")
    print(f"page alone (baseline)        {base:6.2f} s")
    print(f"page + {games} replay pages made {make:6.2f} s  ({make / base:.1f}x; "
          f"{(make - base) / games * 1000:.0f} ms and {size / games / 1e6:.2f} MB a game)")
    print(f"page, replay pages kept      {kept:6.2f} s  ({kept / base:.1f}x)")
    print(f"a run's own report makes them up to {REPLAYS_AT_RUN_END} games: "
          f"about {REPLAYS_AT_RUN_END * (make - base) / games:.0f} s at its end")


if __name__ == "__main__":
    main()
