"""What running two games at once on a core costs, with the tournament code left out.

    /work/venv/bin/python benchmarks/games_per_core.py [--games 8] [--rounds 3] [--cores 0,1]

One process per listed core, pinned to it (its bots inherit the pinning, as
in a tournament worker), plays ``--games`` Back Alley games between
``sample_bots/random_bot.py`` bots through ``run_match``: first one game at a
time, then (after every core finished the first setting) two at a time.
All cores run the same setting together, so ``--cores 0,1`` loads the
machine as a 2-core tournament does (jobs=2 against jobs=4), and
``--cores 0`` shows the same comparison with the other core idle.

It prints, per setting, the games per minute of all cores together and the
CPU each game took, split into the referee process and its bots (the bots'
figure is from ``RUSAGE_CHILDREN``), and the stolen time (hypervisor).  If
the bots' own CPU per game grows when two games share a core, the cost is
the machine's (caches, address-space switches), not the referee's: the
bots run the same code either way.
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

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "sample_bots" / "random_bot.py"


def child(core: int, at_once: int, games: int, seed: int) -> dict:
    """Play ``games`` games on ``core``, ``at_once`` at a time; CPU and wall per game."""
    import trio

    sys.path.insert(0, str(ROOT))
    from referee.logging import configure_logging
    from referee.match.runner import run_match
    from referee.match.types import BotSpec

    configure_logging("warning")
    os.sched_setaffinity(0, {core})

    async def game(g: int, out: Path) -> None:
        bots = [BotSpec(f"r{s}", (sys.executable, str(BOT), str(seed + g * 10 + s))) for s in range(4)]
        result = await run_match("back-alley", None, bots, seed=seed + g, record_path=out / f"{g}.jsonl")
        assert result.fault is None, result.fault

    async def run(out: Path) -> None:
        limiter = trio.CapacityLimiter(at_once)

        async def one(g: int) -> None:
            async with limiter:
                await game(g, out)

        async with trio.open_nursery() as nursery:
            for g in range(games):
                nursery.start_soon(one, g)

    with tempfile.TemporaryDirectory() as tmp:
        me0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        steal0, t0 = cpu_ticks()[1], time.perf_counter()
        trio.run(run, Path(tmp))
        wall, steal1 = time.perf_counter() - t0, cpu_ticks()[1]
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall_s": wall,
        "referee_cpu_ms": (me.ru_utime + me.ru_stime - me0.ru_utime - me0.ru_stime) / games * 1000,
        "bots_cpu_ms": (kids.ru_utime + kids.ru_stime - kids0.ru_utime - kids0.ru_stime) / games * 1000,
        "stolen": (steal1 - steal0) / wall,
    }


def setting(cores: list[int], at_once: int, games: int, seed: int) -> dict:
    """Every core plays the same setting at the same time; totals over cores."""
    procs = [
        subprocess.Popen([sys.executable, __file__, "--child", str(c), "--at-once", str(at_once),
                          "--games", str(games), "--seed", str(seed)], stdout=subprocess.PIPE, text=True)
        for c in cores
    ]
    rows = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"a core's run failed (exit {p.returncode})")
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return {
        "games_per_min": sum(games / r["wall_s"] * 60 for r in rows),
        "referee_cpu_ms": statistics.mean(r["referee_cpu_ms"] for r in rows),
        "bots_cpu_ms": statistics.mean(r["bots_cpu_ms"] for r in rows),
        "stolen": statistics.mean(r["stolen"] for r in rows),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=8, help="games per core per setting")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cores", default=None, help="comma-separated cores (default: all of this process's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--at-once", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.at_once, args.games, args.seed)))
        return 0
    cores = [int(c) for c in args.cores.split(",")] if args.cores else sorted(os.sched_getaffinity(0))
    runs: dict[int, list[dict]] = {1: [], 2: []}
    for r in range(args.rounds):
        for at_once in ((1, 2) if r % 2 == 0 else (2, 1)):
            runs[at_once].append(setting(cores, at_once, args.games, args.seed + 1000 * r))
    print(f"Back Alley, random bots, {args.games} games per core per run, cores {cores}, "
          f"medians of {args.rounds} rounds")
    print(f"{'games at once per core':>22} {'games/min':>10} {'referee CPU/game':>17} {'bots CPU/game':>14} "
          f"{'stolen':>7}")
    med = {}
    for at_once, rows in runs.items():
        med[at_once] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        m = med[at_once]
        print(f"{at_once:>22} {m['games_per_min']:>10.1f} {m['referee_cpu_ms']:>14.1f} ms {m['bots_cpu_ms']:>11.1f} ms "
              f"{m['stolen']:>7.2f}")
    for k, label in (("games_per_min", "games/min"), ("referee_cpu_ms", "referee CPU per game"),
                     ("bots_cpu_ms", "bots CPU per game")):
        print(f"two at once / one at a time, {label}: {med[2][k] / med[1][k]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
