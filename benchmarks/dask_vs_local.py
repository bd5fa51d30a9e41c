"""Games per minute on Dask against the local runner, and what a game costs the coordinator.

    .venv/bin/python benchmarks/dask_vs_local.py [--games N] [--rounds R] [--long-lived] [--json]

Modes, each in a fresh Python process (``--one MODE``), in the same run:

* ``local``: ``--jobs 2``, local worker processes (the baseline);
* ``dask-local``: ``--dask local:2`` (a LocalCluster started by the run: its
  scheduler and nannies live in the coordinator process);
* ``dask-ext``: a ``dask scheduler`` and two ``dask worker --nthreads 1``
  processes started beforehand, the coordinator a client only; the
  scheduler's CPU is measured apart.

Target (2-core machine): dask-local >= 0.85 x local in games per minute.

Games per minute count the games phase only (first game handed out to last
result written, ``ProgressSink.start`` to ``finish``); the start-up (a cluster
takes seconds) is shown apart.  "coordinator CPU/game" is the CPU time
(user + system, all threads) of the ``referee run`` process over the games
phase divided by the games: its inverse is how many games per second one
coordinator could absorb before it is the bottleneck (and likewise for the
scheduler).  Two entrants running ``sample_bots/random_bot.py {seed}`` play
Back Alley (N games: N/2 deals x 2 seatings).  With ``--rounds R`` each mode
runs R times, each round in another order, and the medians are shown.
With ``--long-lived`` the command is ``random_bot.py 7`` (the same for every
game), so each bot process plays many games (protocol version 2), locally and
on Dask alike; otherwise ``{seed}`` makes every game start its own processes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "sample_bots" / "random_bot.py"
MODES = ("local", "dask-local", "dask-ext")


def _cpu_self() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _cpu_of(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Probe:
    """A ProgressSink that notes the time and CPU at the games phase's start and end."""

    def __init__(self, scheduler_pid: int | None) -> None:
        self.scheduler_pid = scheduler_pid
        self.marks: list[tuple[float, float, float]] = []

    def _mark(self) -> None:
        sched = _cpu_of(self.scheduler_pid) if self.scheduler_pid else 0.0
        self.marks.append((time.perf_counter(), _cpu_self(), sched))

    def start(self, *, total: int, done: int, faults: int) -> None:
        self._mark()

    def advance(self, result) -> None:
        pass

    def finish(self) -> None:
        self._mark()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _external_cluster(logs: Path, env: dict[str, str] | None = None) -> tuple[str, list[subprocess.Popen]]:
    """A ``dask scheduler`` and two ``dask worker --nthreads 1`` on 127.0.0.1 (``env``: their
    environment, default this process's)."""
    import distributed

    address = f"tcp://127.0.0.1:{_free_port()}"
    log = (logs / "cluster.log").open("ab")
    # Each in a session of its own, tied to this process: a benchmark that is killed ends them too.
    tied = [sys.executable, str(ROOT / "tests" / "fixtures" / "tied_to_parent.py"), str(os.getpid()),
            sys.executable, "-m"]
    procs = [subprocess.Popen([*tied, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":", 1)[1], "--no-dashboard"], stdout=log, stderr=log,
                              start_new_session=True, env=env)]
    procs += [subprocess.Popen([*tied, "distributed.cli.dask_worker", address, "--nthreads", "1", "--host",
                                "127.0.0.1", "--no-dashboard"], stdout=log, stderr=log, start_new_session=True,
                               env=env)
              for _ in range(2)]
    with distributed.Client(address, timeout=60) as c:
        c.wait_for_workers(2, timeout=120)
    return address, procs


def one(mode: str, games: int, long_lived: bool = False) -> dict:
    import trio

    from tournaments.config import parse, resolve
    from tournaments.runner import run_tournament

    with tempfile.TemporaryDirectory(prefix="dask-bench-") as tmp:
        procs: list[subprocess.Popen] = []
        dask = {"local": None, "dask-local": "local:2"}.get(mode)
        if mode == "dask-ext":
            dask, procs = _external_cluster(Path(tmp))
        try:
            data = {"game": "back-alley", "seed": 3, "games_per_pairing": games // 2, "output": f"{tmp}/out",
                    "limits": {"decision_s": 30.0, "handshake_s": 60.0},
                    "entrants": [{"name": n, "command": [sys.executable, str(BOT), "7" if long_lived else "{seed}"]}
                                 for n in ("a", "b")]}
            if dask is not None:
                data["dask"] = dask
            else:
                data["jobs"] = 2
            t = resolve(parse(data), ROOT)
            probe = Probe(procs[0].pid if procs else None)
            began = time.perf_counter()
            run = trio.run(lambda: run_tournament(t, progress=probe))
            ended = time.perf_counter()
        finally:
            for p in procs:
                p.kill()
                p.wait()
    (t0, cpu0, s0), (t1, cpu1, s1) = probe.marks
    assert run.played == games
    return {"mode": mode, "games": games, "games_per_min": games / (t1 - t0) * 60,
            "startup_s": t0 - began, "total_s": ended - began,
            "coordinator_cpu_ms_per_game": (cpu1 - cpu0) / games * 1000,
            "scheduler_cpu_ms_per_game": (s1 - s0) / games * 1000 if procs else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--long-lived", action="store_true", help="one command for every game: processes play many")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", choices=MODES)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.games, args.long_lived)))
        return
    load_before = os.getloadavg()
    runs: dict[str, list[dict]] = {m: [] for m in MODES}
    for r in range(args.rounds):
        order = MODES[r % len(MODES):] + MODES[:r % len(MODES)]
        for mode in order:
            flags = ["--long-lived"] if args.long_lived else []
            out = subprocess.run([sys.executable, __file__, "--one", mode, "--games", str(args.games), *flags],
                                 capture_output=True, text=True, cwd=ROOT, check=True)
            runs[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
    load_after = os.getloadavg()
    med = {m: {k: statistics.median(x[k] for x in rs) if rs[0][k] is not None else None
               for k in rs[0] if k != "mode"} for m, rs in runs.items()}
    if args.json:
        print(json.dumps({"runs": runs, "median": med, "load": [load_before, load_after]}, indent=2))
        return
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min); "
          f"{args.games} games per run, {args.rounds} round(s), "
          f"{'long-lived bots' if args.long_lived else 'a process per game'}")
    print(f"{'mode':<11} {'games/min':>9} {'vs local':>8} {'start s':>8} {'coord CPU ms/game':>18} "
          f"{'sched CPU ms/game':>18}")
    base = med["local"]["games_per_min"]
    for m in MODES:
        x = med[m]
        sched = f"{x['scheduler_cpu_ms_per_game']:.1f}" if x["scheduler_cpu_ms_per_game"] is not None else "-"
        print(f"{m:<11} {x['games_per_min']:9.1f} {x['games_per_min'] / base:8.2f} {x['startup_s']:8.1f} "
              f"{x['coordinator_cpu_ms_per_game']:18.1f} {sched:>18}")
    ext = med["dask-ext"]
    print(f"one coordinator absorbs about {1000 / ext['coordinator_cpu_ms_per_game']:.0f} games/s "
          f"(dask-ext client); its scheduler about {1000 / ext['scheduler_cpu_ms_per_game']:.0f} games/s")


if __name__ == "__main__":
    main()
