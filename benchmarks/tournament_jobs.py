"""Tournament throughput for --jobs 1, 2, 4 with random bots in Back Alley.

    /work/venv/bin/python benchmarks/tournament_jobs.py [--games N] [--jobs 1,2,4] [--rounds R] [--json]

Targets (2-core machine): jobs=2 >= 1.7 x jobs=1; jobs=4 not slower than
jobs=2; referee memory with 4 parallel games < 150 MB (bots excluded).

Each setting runs in a fresh Python process (``--one``), so that its
measurements are its own.  The referee is that process plus its game workers
(``tournaments.workers``, one per core, each pinned to its core with its
bots); its memory is their summed PSS, bots excluded.  The process runs
``run_tournament`` as ``referee run`` does, minus the progress display, on
two entrants with
``sample_bots/random_bot.py {seed}`` (N games: N/2 deals x 2 seatings).
One warm-up setting runs first and is discarded, so that the jobs=1 baseline
does not pay for cold caches.  With ``--rounds R`` every setting runs R
times, each round starting at a different setting, and the table shows each
setting's median run; the ratios of neighbouring settings within each round
are printed too (whole-run rates drift by +-10% on the development VM, and
the pairs cancel most of that).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import cpu_ticks  # benchmarks/machine.py

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "sample_bots" / "random_bot.py"


def _proc_values(pid: int) -> tuple[float, float] | None:
    """(CPU seconds, PSS in MB) of one process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            pss = next(int(line.split()[1]) for line in f if line.startswith(b"Pss:"))
    except (OSError, StopIteration, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), pss / 1024


def _referee_pids() -> list[int]:
    """This process and its game workers (the bots are the workers' children)."""
    me = os.getpid()
    pids = [me]
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == me:
                pids.append(int(name))
    return pids


def one(jobs: int, games: int, out: Path) -> dict:
    """Run one tournament in this process and measure it.

    The referee is this process plus its worker processes (tournaments.workers);
    their memory is summed as PSS (shared library pages split between them, so
    nothing is counted twice), sampled every 0.1 s; their CPU is read from
    /proc just before they exit.  Bots CPU = all children's CPU minus the workers'."""
    import trio

    from referee.logging import configure_logging
    from tournaments.config import parse, resolve
    from tournaments.runner import run_tournament

    configure_logging("warning")  # stderr; stdout carries the measurement

    data = {
        "game": "back-alley", "seed": 1, "games_per_pairing": max(1, games // 2), "jobs": jobs,
        "output": str(out),
        "limits": {"decision_s": 10.0, "handshake_s": 30.0},
        "entrants": [{"name": n, "command": [sys.executable, str(BOT), "{seed}"]} for n in ("random-a", "random-b")],
    }
    t = resolve(parse(data), ROOT)
    peak_mb = 0.0
    worker_cpu: dict[int, float] = {}

    async def sample(cancel: trio.CancelScope) -> None:
        nonlocal peak_mb
        with cancel:
            while True:
                total = 0.0
                for pid in _referee_pids():
                    values = _proc_values(pid)
                    if values is not None:
                        total += values[1]
                        if pid != os.getpid():
                            worker_cpu[pid] = values[0]
                peak_mb = max(peak_mb, total)
                await trio.sleep(0.1)

    async def run():
        import tournaments.workers as workers

        original = workers._Worker.aclose

        async def aclose(self, stop_s):  # the worker's CPU, just before it is stopped
            if (values := _proc_values(self.process.pid)) is not None:
                worker_cpu[self.process.pid] = values[0]
            await original(self, stop_s)

        workers._Worker.aclose = aclose
        async with trio.open_nursery() as nursery:
            cancel = trio.CancelScope()
            nursery.start_soon(sample, cancel)
            try:
                return await run_tournament(t)
            finally:
                cancel.cancel()

    before = resource.getrusage(resource.RUSAGE_SELF)
    idle0, steal0 = cpu_ticks()
    start = time.perf_counter()
    run = trio.run(run)
    wall = time.perf_counter() - start
    idle1, steal1 = cpu_ticks()
    faults = sum(r.fault is not None for r in run.results.values())
    decisions = sum(r.decisions for r in run.results.values())
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU of the run itself: imports and setup before it are left out.
    workers_cpu = sum(worker_cpu.values())
    referee_cpu = me.ru_utime + me.ru_stime - before.ru_utime - before.ru_stime + workers_cpu
    bots_cpu = children.ru_utime + children.ru_stime - workers_cpu
    return {
        "jobs": jobs,
        "workers": len(worker_cpu),
        "games": run.played,
        "seconds": round(wall, 3),
        "games_per_min": round(run.played / wall * 60, 1),
        "decisions_per_s": round(decisions / wall),
        "faults": faults,
        "referee_peak_mb": round(peak_mb, 1),
        "referee_cpu_s": round(referee_cpu, 2),
        "bots_cpu_s": round(bots_cpu, 2),
        "cpu_s_per_game": round((referee_cpu + bots_cpu) / max(1, run.played), 3),
        "cores_busy": round((referee_cpu + bots_cpu) / wall, 2),
        # Time the hypervisor ran something else on our cores, and time they sat idle.
        "cores_stolen": round((steal1 - steal0) / wall, 2),
        "cores_idle": round((idle1 - idle0) / wall, 2),
    }


def measure(jobs: int, games: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="tournament-bench-") as tmp:
        res = subprocess.run(
            [sys.executable, __file__, "--one", "--jobs", str(jobs), "--games", str(games), "--out", f"{tmp}/out"],
            capture_output=True, text=True, cwd=ROOT, check=False,
        )
    if res.returncode != 0:
        raise SystemExit(f"jobs={jobs} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _median_row(rows: list[dict]) -> dict:
    """The run with the median games/min (a real run, so its other columns match it)."""
    return sorted(rows, key=lambda r: r["games_per_min"])[len(rows) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=40, help="games per setting (even)")
    ap.add_argument("--jobs", default="1,2,4", help="comma-separated settings; the first is the baseline")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every setting this many times, in rotating order, and report medians")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.one:
        print(json.dumps(one(int(args.jobs), args.games, args.out)))
        return 0

    settings = [int(j) for j in args.jobs.split(",")]
    measure(2, 4)  # warm-up, discarded
    runs: dict[int, list[dict]] = {j: [] for j in settings}
    for r in range(args.rounds):  # round r starts at setting r: no setting always runs first
        for j in settings[r % len(settings):] + settings[:r % len(settings)]:
            runs[j].append(measure(j, args.games))
    rows = [_median_row(runs[j]) for j in settings]
    base = rows[0]["games_per_min"]
    for r in rows:
        r["speedup"] = round(r["games_per_min"] / base, 2)
    by_jobs = {r["jobs"]: r for r in rows}
    checks = {}
    if 1 in by_jobs and 2 in by_jobs:
        checks["jobs2_at_least_1.7x_jobs1"] = by_jobs[2]["games_per_min"] >= 1.7 * by_jobs[1]["games_per_min"]
    if 2 in by_jobs and 4 in by_jobs:
        checks["jobs4_not_slower_than_jobs2"] = by_jobs[4]["games_per_min"] >= by_jobs[2]["games_per_min"]
    if 4 in by_jobs:
        checks["jobs4_referee_memory_below_150MB"] = by_jobs[4]["referee_peak_mb"] < 150
    report = {"cores": len(os.sched_getaffinity(0)), "python": sys.version.split()[0], "rows": rows,
              "checks": checks, "rounds": args.rounds}
    if args.rounds > 1:  # ratios within each round, where the machine's drift cancels
        report["paired"] = {
            f"jobs{b}/jobs{a}": sorted(round(y["games_per_min"] / x["games_per_min"], 3)
                                      for x, y in zip(runs[a], runs[b], strict=True))
            for a, b in itertools.pairwise(settings)
        }
    if 1 in by_jobs:
        report["speedup_ceiling"] = round(report["cores"] / by_jobs[1]["cores_busy"], 2)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"Back Alley, 2 random entrants, {args.games} games per setting, {report['cores']} cores")
    print(f"{'jobs':>4} {'games/min':>10} {'speedup':>8} {'referee mem':>12} {'referee CPU':>12} "
          f"{'bots CPU':>9} {'CPU/game':>9} {'cores busy':>11} {'stolen':>7} {'idle':>5} {'faults':>7}")
    for r in rows:
        print(f"{r['jobs']:>4} {r['games_per_min']:>10.1f} {r['speedup']:>7.2f}x "
              f"{r['referee_peak_mb']:>9.1f} MB {r['referee_cpu_s']:>10.1f} s {r['bots_cpu_s']:>7.1f} s "
              f"{r['cpu_s_per_game']:>7.3f} s {r['cores_busy']:>11.2f} {r['cores_stolen']:>7.2f} "
              f"{r['cores_idle']:>5.2f} {r['faults']:>7}")
    if 1 in by_jobs:
        ceiling = report["speedup_ceiling"]
        print(f"ceiling: {report['cores']} cores / {by_jobs[1]['cores_busy']:.2f} cores busy at jobs=1 "
              f"= at most {ceiling:.2f}x over jobs=1 on this machine")
    print("referee mem = peak PSS of the referee and its game workers together (bots excluded)")
    print("stolen / idle = cores' worth of time the hypervisor gave to others / nobody used")
    if args.rounds > 1:
        print(f"medians of {args.rounds} rounds (settings in rotating order); ratios within each round:")
        for name, ratios in report["paired"].items():
            print(f"  {name}: median {statistics.median(ratios):.2f}  all {', '.join(f'{x:.2f}' for x in ratios)}")
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
