"""How far one Dask scheduler and one coordinator scale with chunks (issue #22).

    .venv/bin/python benchmarks/dask_scale.py [--part a|b|c|all] [--games N] [--json]

Each part runs in fresh processes; every figure's baseline is measured in the same run,
and the load average is printed (the machine is shared: CPU *times*, not wall times,
are what to compare).

(a) **Scheduler CPU per game**, an external ``dask scheduler`` and two ``dask worker
    --nthreads 1`` processes on this machine, real games (Back Alley, two
    ``random_bot.py 7``: long-lived bots, so a game is short): ``--batch 2`` (one
    unit: two games per task, the one-game-per-task baseline's order of cost) against
    the default batch (sized from the game time), both with Dask's default settings,
    and the default batch with the scheduler and workers started as docs/distributed.md
    says, with ``tournaments.config.DASK_QUIET`` (less monitoring).  The scheduler's idle CPU (heartbeats,
    no run) is measured for a few seconds before, per second: it is a floor no batch
    size removes, and it is shown apart ("idle share").

(b) **A simulation of many workers**: a scheduler and N = 8, 16, 32, 64 lightweight
    workers (``distributed.Worker`` objects with ``nthreads=1``, all in one process),
    driven by a *game-time stand-in*: ``DaskExecutor.chunk_task`` is replaced by
    ``stand_in_chunk`` below, whose games are a ``STAND_IN_GAME_S`` sleep that leaves a
    tiny record in the worker's spool; the coordinator does all it does in a real run
    (chunk sizing, fetches, results lines with MACs, standings).  Coordinator and
    scheduler CPU per game should stay flat as N grows; "cores fed" is the measured
    game time of part (a) (or ``--game-s``) over the scheduler's CPU per game.  The
    hook is a class attribute only this file sets: no option reaches it.

(c) **Games per minute**: ``--dask local:2 --batch K`` against local ``--jobs 2`` (the
    target: >= 0.95x), K = ``--batch-c`` (default 16), long-lived bots.  Each mode
    runs ``--rounds`` times, alternating the order; medians are shown, with the
    median game time as the worker measured it: its ratio is the ceiling of the
    games/min ratio while the games themselves run slower on a Dask worker.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dask_vs_local import BOT, ROOT, Probe, _cpu_of, _external_cluster, _free_port  # noqa: E402

STAND_IN_GAME_S = 0.02  # (b): what a stand-in game costs its worker, asleep


def stand_in_chunk(chunk, jobs, setup, run, pin=True, files="spool", shared=None):
    """A chunk task whose games are a fixed sleep (benchmark only): the reply of
    ``play_chunk_task``, with a tiny record per game in this worker's spool."""
    import time as _time

    from referee.games import Outcome
    from tournaments import dask_executor as d

    started = _time.monotonic()
    loop = d._run_loop(run, False)
    loop.idle_s = 1e9  # a stand-in plays no game on the loop: it must not close itself as idle
    spool = loop.root / "spool" / f"chunk{chunk}-bench"
    games = []
    for job in jobs:
        _time.sleep(STAND_IN_GAME_S)
        (spool / str(job["id"])).mkdir(parents=True, exist_ok=True)
        (spool / str(job["id"]) / "record.jsonl").write_text('{"record":"header"}\n')
        outcome = Outcome("win", (0,), (1, 0), reason="stand-in").to_json()
        games.append({"id": job["id"], "kept": [], "result": {
            "game": job["game"], "seed": job["seed"], "outcome": outcome,
            "fault": None, "decisions": 1, "duration_s": STAND_IN_GAME_S, "sandbox": "off", "decision_ms": []}})
    return {"chunk": chunk, "worker": d.worker_name(), "address": d._address(), "spool": spool.name, "games": games,
            "summary": {"games": len(games), "faults": 0, "seconds": round(_time.monotonic() - started, 3)}}


def _data(tmp: str, games: int, dask: str | None, batch: int | None = None, jobs: int | None = None) -> dict:
    data = {"game": "back-alley", "seed": 3, "games_per_pairing": games // 2, "output": f"{tmp}/out",
            "limits": {"decision_s": 30.0, "handshake_s": 60.0}, "pin_cores": False,
            "entrants": [{"name": n, "command": [sys.executable, str(BOT), "7"]} for n in ("a", "b")]}
    if dask is not None:
        data["dask"] = dask
    if batch is not None:
        data["batch"] = batch
    if jobs is not None:
        data["jobs"] = jobs
    return data


def _run(data: dict, scheduler_pid: int | None) -> dict:
    import trio

    from tournaments.config import parse, resolve
    from tournaments.runner import run_tournament

    t = resolve(parse(data), ROOT)
    probe = Probe(scheduler_pid)
    run = trio.run(lambda: run_tournament(t, progress=probe))
    (t0, cpu0, s0), (t1, cpu1, s1) = probe.marks
    games = run.played
    durations = sorted(r.duration_s for r in run.results.values())
    return {"games": games, "wall_s": t1 - t0, "games_per_min": games / (t1 - t0) * 60,
            "coordinator_cpu_ms_per_game": (cpu1 - cpu0) / games * 1000,
            "scheduler_cpu_ms_per_game": (s1 - s0) / games * 1000 if scheduler_pid else None,
            "scheduler_cpu_s": s1 - s0 if scheduler_pid else None, "game_s": durations[len(durations) // 2]}


def _idle_rate(pid: int, seconds: float = 5.0) -> float:
    """The scheduler's CPU per second with nothing to do (heartbeats)."""
    c0, t0 = _cpu_of(pid), time.perf_counter()
    time.sleep(seconds)
    return (_cpu_of(pid) - c0) / (time.perf_counter() - t0)


def _noop(i: int) -> int:
    return i


def task_cost(address: str, pid: int, tasks: int = 400) -> float:
    """The scheduler's CPU per trivial task (submitted one by one, as chunks are), in ms:
    what one task costs whatever it does."""
    import distributed

    with distributed.Client(address, timeout=60, direct_to_workers=True) as c:
        c0 = _cpu_of(pid)
        futures = [c.submit(_noop, i, pure=False) for i in range(tasks)]
        c.gather(futures)
        del futures
        time.sleep(0.5)  # the releases
        return (_cpu_of(pid) - c0) / tasks * 1000


def part_a(games: int) -> dict:
    out = {}
    from tournaments.config import DASK_QUIET, dask_env_name

    default = {k: v for k, v in os.environ.items() if k not in {dask_env_name(q) for q in DASK_QUIET}}
    quiet = {**default, **{dask_env_name(k): v for k, v in DASK_QUIET.items()}}
    for label, batch, env in (("batch 2 (one unit)", 2, default), ("default batch", None, default),
                              ("default batch, quiet settings", None, quiet)):
        with tempfile.TemporaryDirectory(prefix="dask-scale-") as tmp:
            address, procs = _external_cluster(Path(tmp), env)
            try:
                idle = _idle_rate(procs[0].pid)
                per_task = task_cost(address, procs[0].pid)
                x = _run(_data(tmp, games, address, batch), procs[0].pid)
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
        x["idle_cpu_ms_per_s"] = idle * 1000
        x["idle_ms_per_game"] = idle * x["wall_s"] / x["games"] * 1000
        x["task_ms"] = per_task
        out[label] = x
    return out


def _workers_process(address: str, n: int) -> subprocess.Popen:
    code = f"""
import asyncio, distributed
async def main():
    workers = [distributed.Worker({address!r}, nthreads=1, host="127.0.0.1", dashboard=False) for _ in range({n})]
    await asyncio.gather(*workers)
    await asyncio.Event().wait()
asyncio.run(main())
"""
    tied = [sys.executable, str(ROOT / "tests" / "fixtures" / "tied_to_parent.py"), str(os.getpid())]
    return subprocess.Popen([*tied, sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, cwd=ROOT)


def part_b(counts: list[int], per_worker: int) -> dict:
    import distributed

    from tournaments.dask_executor import DaskExecutor

    DaskExecutor.chunk_task = staticmethod(stand_in_chunk)  # the benchmark-only hook
    out = {}
    for n in counts:
        with tempfile.TemporaryDirectory(prefix="dask-scale-") as tmp:
            address = f"tcp://127.0.0.1:{_free_port()}"
            tied = [sys.executable, str(ROOT / "tests" / "fixtures" / "tied_to_parent.py"), str(os.getpid())]
            log = (Path(tmp) / "scheduler.log").open("ab")
            sched = subprocess.Popen([*tied, sys.executable, "-m", "distributed.cli.dask_scheduler", "--host",
                                      "127.0.0.1", "--port", address.rsplit(":", 1)[1], "--no-dashboard"],
                                     stdout=log, stderr=log, start_new_session=True)
            workers = _workers_process(address, n)
            try:
                with distributed.Client(address, timeout=60) as c:
                    c.wait_for_workers(n, timeout=300)
                idle = _idle_rate(sched.pid, 3.0)
                x = _run(_data(tmp, n * per_worker, address), sched.pid)
            finally:
                for p in (workers, sched):
                    p.kill()
                    p.wait()
        x["idle_cpu_ms_per_s"] = idle * 1000
        x["idle_ms_per_game"] = idle * x["wall_s"] / x["games"] * 1000
        out[n] = x
    return out


def part_c(games: int, batch: int, rounds: int) -> dict:
    modes = {"local --jobs 2": (None, None, 2), f"dask local:2 --batch {batch}": ("local:2", batch, None)}
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for r in range(rounds):
        order = list(modes) if r % 2 == 0 else list(reversed(modes))
        for m in order:
            dask, b, jobs = modes[m]
            res = subprocess.run([sys.executable, __file__, "--one-c", json.dumps([dask, b, jobs]), "--games",
                                  str(games)], capture_output=True, text=True, cwd=ROOT, check=True)
            runs[m].append(json.loads(res.stdout.strip().splitlines()[-1]))
    return {m: {"games_per_min": statistics.median(x["games_per_min"] for x in rs),
                "coordinator_cpu_ms_per_game": statistics.median(x["coordinator_cpu_ms_per_game"] for x in rs),
                "game_s": statistics.median(x["game_s"] for x in rs),
                "runs": [round(x["games_per_min"], 1) for x in rs]} for m, rs in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("a", "b", "c", "all"), default="all")
    ap.add_argument("--games", type=int, default=80, help="(a), (c): games per run")
    ap.add_argument("--workers", default="8,16,32,64", help="(b): worker counts")
    ap.add_argument("--per-worker", type=int, default=40, help="(b): games per worker")
    ap.add_argument("--batch-c", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--game-s", type=float, default=None, help="(b): game time for 'cores fed' (default: (a)'s)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one-c")
    ap.add_argument("--task-cost", action="store_true", help="only the scheduler's CPU per trivial task")
    args = ap.parse_args()
    if args.one_c:
        dask, batch, jobs = json.loads(args.one_c)
        with tempfile.TemporaryDirectory(prefix="dask-scale-") as tmp:
            print(json.dumps(_run(_data(tmp, args.games, dask, batch, jobs), None)))
        return
    if args.task_cost:
        with tempfile.TemporaryDirectory(prefix="dask-scale-") as tmp:
            address, procs = _external_cluster(Path(tmp))
            try:
                idle = _idle_rate(procs[0].pid)
                print(f"load {os.getloadavg()[0]:.2f}; idle scheduler {idle * 1000:.1f} ms CPU/s; "
                      f"a trivial task costs it {task_cost(address, procs[0].pid):.2f} ms CPU")
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
        return
    load = [os.getloadavg()[0]]
    report: dict = {}
    if args.part in ("a", "all"):
        report["a"] = part_a(args.games)
        load.append(os.getloadavg()[0])
    if args.part in ("b", "all"):
        report["b"] = part_b([int(x) for x in args.workers.split(",")], args.per_worker)
        load.append(os.getloadavg()[0])
    if args.part in ("c", "all"):
        report["c"] = part_c(args.games, args.batch_c, args.rounds)
        load.append(os.getloadavg()[0])
    report["load"] = load
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"load average (1 min) at the start and after each part: {', '.join(f'{x:.2f}' for x in load)}; "
          f"{os.cpu_count()} cores")
    game_s = args.game_s
    if "a" in report:
        print(f"\n(a) external scheduler, 2 workers, {args.games} real games (long-lived random bots)")
        print(f"{'':<30} {'sched ms/game':>13} {'idle share':>10} {'above idle':>10} {'coord ms/game':>13} "
              f"{'games/min':>9} {'idle ms/s':>9}")
        for label, x in report["a"].items():
            print(f"{label:<30} {x['scheduler_cpu_ms_per_game']:13.2f} {x['idle_ms_per_game']:10.2f} "
                  f"{x['scheduler_cpu_ms_per_game'] - x['idle_ms_per_game']:10.2f} "
                  f"{x['coordinator_cpu_ms_per_game']:13.2f} {x['games_per_min']:9.1f} "
                  f"{x['idle_cpu_ms_per_s']:9.1f}")
        base, dflt = report["a"]["batch 2 (one unit)"], report["a"]["default batch"]
        quiet = report["a"]["default batch, quiet settings"]
        ratio = dflt["scheduler_cpu_ms_per_game"] / base["scheduler_cpu_ms_per_game"]
        q_ratio = quiet["scheduler_cpu_ms_per_game"] / base["scheduler_cpu_ms_per_game"]
        print(f"default / one unit, scheduler CPU per game: {ratio:.2f}x; with the quiet settings "
              f"(tournaments.config.DASK_QUIET): {q_ratio:.2f}x (target: <= 1 ms per game at the default batch)")
        game_s = game_s or dflt["game_s"]
        print(f"median game time: {dflt['game_s']:.3f} s; the idle scheduler burns "
              f"{dflt['idle_cpu_ms_per_s']:.1f} ms CPU per second; a trivial task costs it "
              f"{statistics.median([base['task_ms'], dflt['task_ms']]):.2f} ms")
    if "b" in report:
        game_s = game_s or 1.0
        print(f"\n(b) simulated workers (nthreads 1, one process), stand-in games of {STAND_IN_GAME_S * 1000:.0f} ms, "
              f"{args.per_worker} games per worker, default batch")
        print(f"{'workers':>7} {'games':>6} {'sched ms/game':>13} {'idle share':>10} {'coord ms/game':>13} "
              f"{'cores fed':>10}")
        for n, x in report["b"].items():
            busy = max(1e-9, x["scheduler_cpu_ms_per_game"] - x["idle_ms_per_game"])
            print(f"{n:>7} {x['games']:>6} {x['scheduler_cpu_ms_per_game']:13.3f} {x['idle_ms_per_game']:10.3f} "
                  f"{x['coordinator_cpu_ms_per_game']:13.3f} {game_s * 1000 / busy:10.0f}")
        print(f"cores fed = game time ({game_s:.3f} s) / the scheduler's CPU per game above its idle floor; "
              f"the coordinator's own limit is game time / coord ms per game")
    if "c" in report:
        print(f"\n(c) games per minute, {args.games} games, long-lived random bots, median of {args.rounds}")
        modes = list(report["c"])
        base = report["c"][modes[0]]["games_per_min"]
        for m in modes:
            x = report["c"][m]
            print(f"{m:<26} {x['games_per_min']:8.1f} games/min ({x['games_per_min'] / base:.2f}x) "
                  f"coord {x['coordinator_cpu_ms_per_game']:.1f} ms/game; median game {x['game_s'] * 1000:.0f} ms; "
                  f"runs {x['runs']}")
        first, last = report["c"][modes[0]]["game_s"], report["c"][modes[-1]]["game_s"]
        print(f"ceiling from the game time alone (a game as the worker measures it, local / Dask): "
              f"{first / last:.2f}x")


if __name__ == "__main__":
    main()
