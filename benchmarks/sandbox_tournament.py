"""Back Alley tournament games per minute with ``--sandbox auto`` against ``off``, same run.

    python benchmarks/sandbox_tournament.py [--games-per-pairing 15] [--rounds 3] [--jobs N]

Target: the sandboxed run at >= 0.9x the games per minute of the unsandboxed one.

Each run is the real command line, ``python -m referee run FILE --output DIR
--sandbox auto|off -q``, on a fresh output folder, with the file's settings:
three entrants, each ``sample_bots/random_bot.py {seed}`` run with this
interpreter, so 3 pairings x G deals x 2 seatings = 6G games, each starting
four bot processes.  ``--jobs`` is the CLI's default (the number of cores)
unless given.  Wall time is the whole command, start-up included.

With ``--rounds K`` both settings run K times, each round in the other
order from the last, so neither always runs first; printed per round:
games/min of each and their ratio (the machine's drift cancels within a
round), then the median of each setting and the median of the per-round
ratios.  One small warm-up run of each setting comes first and is not
counted (page cache, bytecode caches).

CPU seconds per game: all the run's CPU (the CLI, its game workers, the bots
and the sandbox's processes), counted by a cgroup v1 ``cpuacct`` group the
command runs in; and the ``getrusage(RUSAGE_CHILDREN)`` figure beside it,
which misses sandboxed bots (a process reaped inside a pid namespace is not
added to its outer ancestors' children time).
"""

from __future__ import annotations

import argparse
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
from sandbox_spawn import CpuAccount  # benchmarks/sandbox_spawn.py

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "sample_bots" / "random_bot.py"
SETTINGS = ("auto", "off")


def tournament_file(folder: Path, games_per_pairing: int) -> Path:
    """Like tournaments/examples/back-alley.toml, with this interpreter and absolute paths."""
    entrants = "".join(
        f'\n[[entrants]]\nname = "random-{c}"\ncommand = ["{sys.executable}", "{BOT}", "{{seed}}"]\n'
        for c in "abc"
    )
    path = folder / "back-alley.toml"
    path.write_text(
        f'game = "back-alley"\nseed = 3\ngames_per_pairing = {games_per_pairing}\n'
        f'output = "unused"\n\n[limits]\ndecision_s = 5.0\nhandshake_s = 30.0\n{entrants}'
    )
    return path


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(setting: str, games_per_pairing: int, jobs: int | None) -> dict:
    """One tournament through the CLI in a fresh folder, measured."""
    with tempfile.TemporaryDirectory(prefix="sandbox-bench-") as tmp:
        folder = Path(tmp)
        toml = tournament_file(folder, games_per_pairing)
        out = folder / "out"
        argv = [sys.executable, "-m", "referee", "run", str(toml), "--output", str(out), "--sandbox", setting, "-q"]
        if jobs is not None:
            argv += ["--jobs", str(jobs)]
        account = CpuAccount.open(setting)
        if account is not None:  # join before exec, so every process of the run is counted
            argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(account.path / "cgroup.procs"), *argv]
        try:
            ru0 = _children_cpu()
            idle0, steal0 = cpu_ticks()
            start = time.perf_counter()
            done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - start
            idle1, steal1 = cpu_ticks()
            ru = _children_cpu() - ru0
            cpu = account.seconds() if account is not None else float("nan")
        finally:
            if account is not None:
                account.close()
        if done.returncode != 0:
            raise SystemExit(f"--sandbox {setting} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    games = len(results)
    if games != 6 * games_per_pairing:
        raise SystemExit(f"--sandbox {setting}: {games} results, expected {6 * games_per_pairing}")
    return {
        "setting": setting, "games": games, "seconds": wall, "games_per_min": games / wall * 60,
        "cpu_per_game": cpu / games, "rusage_per_game": ru / games, "stolen": (steal1 - steal0) / wall,
        "idle": (idle1 - idle0) / wall, "load": os.getloadavg()[0],
        "faults": sum(r["fault"] is not None for r in results),
        "game_s": statistics.mean(r["duration_s"] for r in results),  # the runner's own clock, start to end
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games-per-pairing", "-n", type=int, default=15,
                    help="deal seeds per pairing: 6 x this many games per run (default 15: 90 games, "
                         "~25 s a run on a quiet 2-core machine)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each setting, in alternating order (default 3)")
    ap.add_argument("--jobs", type=int, default=None, help="--jobs for the CLI (default: its own, the cores)")
    ap.add_argument("--no-warmup", action="store_true", help="skip the discarded warm-up runs")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"Back Alley, 3 random entrants, {6 * args.games_per_pairing} games per run, jobs "
          f"{args.jobs or 'default'}, {len(os.sched_getaffinity(0))} cores, {args.rounds} rounds; "
          f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if CpuAccount.open("probe") is None:
        print("no writable cpuacct hierarchy: CPU/game is NaN, see rusage (which misses sandboxed bots)")
    else:
        CpuAccount(CpuAccount.ROOT / f"referee-bench-probe-{os.getpid()}").close()
    if not args.no_warmup:
        for s in SETTINGS:
            run_once(s, 1, args.jobs)
    runs: dict[str, list[dict]] = {s: [] for s in SETTINGS}
    print(f"{'round':>5} {'setting':>7} {'games/min':>10} {'seconds':>8} {'game s':>7} {'CPU/game':>9} "
          f"{'rusage/game':>12} {'stolen':>7} {'idle':>5} {'load':>5} {'faults':>6}")
    ratios = []
    for r in range(args.rounds):
        order = SETTINGS if r % 2 == 0 else SETTINGS[::-1]
        for s in order:
            row = run_once(s, args.games_per_pairing, args.jobs)
            runs[s].append(row)
            print(f"{r + 1:>5} {s:>7} {row['games_per_min']:>10.1f} {row['seconds']:>8.1f} {row['game_s']:>7.2f} "
                  f"{row['cpu_per_game']:>7.3f} s {row['rusage_per_game']:>10.3f} s {row['stolen']:>7.2f} "
                  f"{row['idle']:>5.2f} {row['load']:>5.2f} {row['faults']:>6}", flush=True)
        ratios.append(runs["auto"][-1]["games_per_min"] / runs["off"][-1]["games_per_min"])
        print(f"{r + 1:>5} auto/off {ratios[-1]:>6.2f}x")
    med = {s: statistics.median(x["games_per_min"] for x in runs[s]) for s in SETTINGS}
    cpu = {s: statistics.median(x["cpu_per_game"] for x in runs[s]) for s in SETTINGS}
    print(f"median games/min: auto {med['auto']:.1f}, off {med['off']:.1f}: ratio {med['auto'] / med['off']:.2f}x; "
          f"per-round ratios median {statistics.median(ratios):.2f}x (all {', '.join(f'{x:.2f}' for x in ratios)})")
    print(f"median CPU/game: auto {cpu['auto']:.3f} s, off {cpu['off']:.3f} s ({cpu['auto'] / cpu['off']:.2f}x)")
    print("game s = mean duration_s of a game in results.jsonl (the runner's clock: bot start to result); "
          "load = 1-minute load average at the end of the run")
    ok = statistics.median(ratios) >= 0.9
    print(f"{'PASS' if ok else 'FAIL'}  auto at >= 0.9x the games/min of off (per-round median)")
    load = os.getloadavg()
    print(f"load at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
