"""Long-lived bots (protocol version 2) against one process per game, same run.

    python benchmarks/long_lived.py [--games-per-pairing 50] [--sleepy-games-per-pairing 10] \\
                                    [--skip-random] [--skip-tables]

Targets (issue 14):

1. Back Alley tournament with the shipped Python random bot
   (``sample_bots/random_bot.py``): games per minute with long-lived bots
   >= 1.5x one process per game.
2. The same with a bot that sleeps 2 s before ``ready``: >= 10x.
3. A multi-table bot (one process, K = 8 tables) playing eight Back Alley
   games at once: >= 0.8x the decisions per second of separate processes.

1 and 2 run the real command line, ``python -m referee run FILE --output DIR
--log-level info`` (default jobs, sandbox auto), two entrants, on fresh
output folders.  The baseline is the same bot with ``{seed}`` in its command:
every game then has its own command line, so no process is ever given a
second game (exactly today's behaviour); the long-lived run passes a fixed
seed instead.  Two rates are printed for each run:

* whole command: games / wall time of the command, start-up, the first bots'
  start and the end of the run included (a run of a few games is mostly
  these fixed costs, so the figure depends on the run's length: it is
  printed with the number of games);
* steady state: the games finished after every worker finished its first one,
  per minute between that moment and the last game (the ``game_finished``
  log lines' timestamps): what a long tournament runs at.  The target is
  judged on this one, and on the whole command for the run length printed.

The fixed costs are printed apart (command start to the first game's end,
last game's end to the command's end), and, for 2, what 10x takes: with one
process per game a game costs its 2 s start-up plus the game, so a long-lived
game must take at most a tenth of that; the game's own length (its decisions
times the round trip to a Python bot) is then what decides.  Before the runs the project's
modules are compiled to bytecode (``compileall``), as a normal install or a
first run leaves them (this machine sets PYTHONDONTWRITEBYTECODE, under which
every start would compile every module again).

3 plays eight games at once in this process through one ``ProcessPool``, every
seat the same multi-table bot (``protocol.bot.run(..., tables=K)``), after one
warm-up round that is not counted; the baseline is the same bot with
``tables=1`` and ``{seed}``-style distinct commands (one process per seat and
game, 32 a round), and the same bot with ``tables=1`` kept between games (32
long-lived processes: throughput without start-up costs).  A process never serves two seats of one game (fair play),
so the K = 8 bot needs four processes for eight four-seat games, not one.

Printed: each figure, its baseline, the ratio, processes started, and the
load average.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.match.pool import ProcessPool  # noqa: E402
from referee.match.runner import run_match  # noqa: E402
from referee.match.types import BotSpec, Limits  # noqa: E402
from tournaments.config import default_jobs  # noqa: E402

SLEEPY = """\
import random, sys, time
from protocol.bot import run
time.sleep(2.0)  # a big model being loaded
rng = random.Random(int(sys.argv[1]))
sys.exit(run(lambda r: rng.choice(r.legal), name="sleepy"))
"""

TABLES = """\
import random, sys
from protocol.bot import run
rng = random.Random(1)
sys.exit(run(lambda r: rng.choice(r.legal), name="tables", tables=int(sys.argv[1])))
"""

DECISIONS = "about 820"  # a Back Alley game of the sample random bots

TOML = """\
game = "back-alley"
seed = 3
games_per_pairing = {games}
[limits]
decision_s = 10.0
handshake_s = 30.0
[[entrants]]
name = "one"
command = "{python} {bot} {arg1}"
[[entrants]]
name = "two"
command = "{python} {bot} {arg2}"
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def tournament_rates(work: Path, bot: Path, games: int, long_lived: bool, tag: str) -> dict[str, float]:
    """One ``referee run``: its games, whole-command and steady-state games per minute, fixed costs."""
    arg1, arg2 = ("1", "2") if long_lived else ("{{seed}}", "{{seed}}")
    toml = work / f"{tag}.toml"
    toml.write_text(TOML.format(games=games, python=sys.executable, bot=bot, arg1=arg1, arg2=arg2))
    out = work / f"{tag}-out"
    started = time.time()
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "referee", "--log-level", "info", "run", str(toml),
                          "--output", str(out), "-q"], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    ended = started + wall
    if res.returncode != 0:
        raise SystemExit(f"{tag}: referee run failed: {res.stderr[-2000:]}")
    n = len((out / "results.jsonl").read_text().splitlines())
    finished = sorted(_log_time(line) for line in res.stderr.splitlines() if "event='game_finished'" in line)
    if len(finished) != n:
        raise SystemExit(f"{tag}: {len(finished)} game_finished lines for {n} games")
    jobs = int(json.loads((out / "tournament.json").read_text())["resolved"]["jobs"])
    warm = finished[min(jobs, n) - 1]  # every worker has finished a game
    steady = (n - min(jobs, n)) / (finished[-1] - warm) * 60 if finished[-1] > warm else float("nan")
    return {"games": n, "whole": n / wall * 60, "steady": steady, "first_s": finished[0] - started,
            "end_s": ended - finished[-1], "game_s": (finished[-1] - warm) / max(n - min(jobs, n), 1) * jobs}


def _log_time(line: str) -> float:
    """The epoch seconds of a structlog line's ``timestamp='...Z'``."""
    stamp = line.split("timestamp='", 1)[1].split("'", 1)[0]
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def compare(work: Path, bot: Path, games: int, what: str, target: float) -> tuple[dict, dict]:
    base = tournament_rates(work, bot, games, False, f"{what}-per-game")
    live = tournament_rates(work, bot, games, True, f"{what}-long-lived")
    print(f"{what}, {base['games']} games (jobs {default_jobs()}), games/min: long-lived / one process per game")
    print(f"  steady state   {live['steady']:7.1f} / {base['steady']:7.1f} = {live['steady'] / base['steady']:5.2f}x"
          f"   (target >= {target:g}x)")
    print(f"  whole command  {live['whole']:7.1f} / {base['whole']:7.1f} = {live['whole'] / base['whole']:5.2f}x")
    print(f"  fixed costs: start to first game's end {live['first_s']:.2f} s / {base['first_s']:.2f} s, "
          f"last game's end to exit {live['end_s']:.2f} s / {base['end_s']:.2f} s; steady-state wall per game "
          f"and job {live['game_s']:.3f} s / {base['game_s']:.3f} s   load {load()}")
    return base, live


async def tables_round(specs: list[BotSpec], pool: ProcessPool, out: Path, round_no: int) -> int:
    decisions = 0

    async def one(i: int) -> None:
        nonlocal decisions
        seats = [BotSpec(s.name, s.command) for s in specs[4 * i: 4 * i + 4]]
        r = await run_match("back-alley", {}, seats, seed=1000 * round_no + i, limits=Limits(decision_s=10.0),
                            record_path=out / f"{round_no}-{i}.jsonl", stderr_dir=out / "stderr", hide=[out],
                            pool=pool)
        assert r.fault is None, r.fault
        decisions += r.decisions

    async with trio.open_nursery() as n:
        for i in range(8):
            n.start_soon(one, i)
    return decisions


async def tables_decisions_per_s(work: Path, bot: Path, tables: int, rounds: int,
                                 per_game: bool = True) -> tuple[float, int]:
    out = work / f"tables-{tables}-{per_game}"
    async with trio.open_nursery() as nursery:
        pool = ProcessPool(nursery)
        try:
            def specs(r: int) -> list[BotSpec]:
                if tables > 1 or not per_game:  # one command for every seat: the pool reuses the processes
                    return [BotSpec("t", (sys.executable, str(bot), str(tables)))] * 32
                # Distinct commands (as ``{seed}`` makes them): one process per seat and game.
                return [BotSpec("t", (sys.executable, str(bot), "1", f"{r}-{k}")) for k in range(32)]

            await tables_round(specs(0), pool, out, 0)  # warm-up
            t0 = time.perf_counter()
            decisions = 0
            for r in range(1, rounds + 1):
                decisions += await tables_round(specs(r), pool, out, r)
            wall = time.perf_counter() - t0
            return decisions / wall, pool.started
        finally:
            await pool.aclose()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games-per-pairing", type=int, default=50)
    ap.add_argument("--sleepy-games-per-pairing", type=int, default=10)
    ap.add_argument("--table-rounds", type=int, default=2)
    ap.add_argument("--skip-tables", action="store_true")
    ap.add_argument("--skip-random", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="long-lived-") as tmp:
        work = Path(tmp)
        random_bot = ROOT / "sample_bots" / "random_bot.py"
        sleepy = work / "bots" / "sleepy.py"
        sleepy.parent.mkdir()
        sleepy.write_text(SLEEPY)
        table_bot = work / "bots" / "tables.py"
        table_bot.write_text(TABLES)
        print(f"load before: {load()}")
        subprocess.run([sys.executable, "-m", "compileall", "-q", "referee", "protocol", "tournaments"], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
        if not args.skip_random:
            compare(work, random_bot, args.games_per_pairing, "1. random bot", 1.5)
        base, live = compare(work, sleepy, args.sleepy_games_per_pairing, "2. 2 s start-up bot", 10)
        print(f"  what 10x takes: a long-lived game at most a tenth of a one-process-per-game one, "
              f"{base['game_s'] / 10:.3f} s per job (its 2 s start-up plus a game: {base['game_s']:.3f} s); "
              f"measured {live['game_s']:.3f} s, so the game itself decides (Back Alley, {DECISIONS} decisions)")
        if not args.skip_tables:
            multi, procs_multi = trio.run(tables_decisions_per_s, work, table_bot, 8, args.table_rounds)
            single, procs_single = trio.run(tables_decisions_per_s, work, table_bot, 1, args.table_rounds)
            kept, procs_kept = trio.run(tables_decisions_per_s, work, table_bot, 1, args.table_rounds, False)
            rounds = args.table_rounds + 1
            print(f"3. eight games at once ({rounds} rounds, warm-up included in the process counts): K=8 bot "
                  f"{multi:.0f} decisions/s, {procs_multi} processes started; separate processes, one per seat "
                  f"and game: {single:.0f} decisions/s, {procs_single} started: {multi / single:.2f}x; separate "
                  f"long-lived single-table processes: {kept:.0f} decisions/s, {procs_kept} started: "
                  f"{multi / kept:.2f}x (target >= 0.8x)   load {load()}")


if __name__ == "__main__":
    main()
