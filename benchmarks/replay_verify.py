"""``referee replay --verify`` on a long Schmier record, decisions per CPU second.

    python benchmarks/replay_verify.py [--runs 5] [--seed 1]

Plays one Schmier game with six C random bots (unsandboxed, record written),
then verifies its record, each way measured in the same run:

* the command, ``referee replay --verify RECORD`` (CPU of the child process,
  start-up included): the figure the target is about (>= 25,000/s);
* the same command as it was before the fast path, rebuilt: a process that
  imports what the old CLI imported at start (every command's module) and
  runs the typed path, ``verify_record(read_record(path))``;
* in-process, start-up excluded: the fast path (``verify_fast``), the typed
  path, and re-simulating the game alone (engine calls only: the ceiling of
  any verifier);
* the ceiling of the command itself: the CPU of a minimal typer app that runs
  a ``replay RECORD --verify`` command doing nothing (the start-up no typer
  command line can go below) plus the fast path's in-process CPU;
* the same minimal app with the fast path in its command, in a process of its
  own: the referee's command without the referee's command line around it
  (its fast path then runs cold, once, as the command's does).

Child processes run with every module's bytecode cached (``bytecode.py``).

Medians of ``--runs``.  Standard library + the project (and a C compiler).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bytecode import NOTE, cached_env, warm_up  # noqa: E402
from referee_throughput import c_bot  # noqa: E402

from referee.games import get_game  # noqa: E402
from referee.match.record import read_record  # noqa: E402
from referee.match.runner import run_match  # noqa: E402
from referee.match.types import BotSpec, Limits  # noqa: E402
from referee.match.verify import verify_fast, verify_record  # noqa: E402

OLD_COMMAND = """
import sys
import referee_cli.main, referee_cli.common, referee.replay, referee.match.runner, tournaments.runner
import tournaments.config, tournaments.report, tournaments.output, trio, rich.console
from referee.match.record import read_record
from referee.match.verify import verify_record
assert verify_record(read_record(sys.argv[1])).ok
"""

# The least any typer command line can cost: a typer app with a root option that runs a command
# taking the record's path and --verify, and does nothing with them (typer builds and runs the
# command's parameters, importing pydantic for them, as for the referee's).
MINIMAL_TYPER_COMMAND = """
from pathlib import Path
import typer
app = typer.Typer(add_completion=False, no_args_is_help=True)
@app.callback()
def root(log_level: str = "warning") -> None:
    pass
@app.command()
def play(game: str) -> None:
    pass
@app.command()
def replay(record: Path, verify: bool = typer.Option(False, "--verify")) -> None:
    pass
app()
"""


# The same app whose command runs the fast path itself: what the referee's command does, without
# the referee's command line around it (its error mapping, logging set-up, lazy command table).
MINIMAL_VERIFY_COMMAND = MINIMAL_TYPER_COMMAND.replace(
    "verify: bool = typer.Option(False, \"--verify\")) -> None:\n    pass",
    "verify: bool = typer.Option(False, \"--verify\")) -> None:\n"
    "    from referee.match.verify import verify_fast\n"
    "    assert verify_fast(record) is not None")
assert MINIMAL_VERIFY_COMMAND != MINIMAL_TYPER_COMMAND


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_of(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def resimulate(path: Path) -> None:
    """The engine calls of a verification and nothing else: the actions, read beforehand."""
    rec = read_record(path)
    actions = [e.action for e in rec.entries if e.record == "decision"]
    spec = get_game(rec.header.game)
    state, _ = spec.new_game(rec.header.seed, spec.normalize_options(rec.header.options))

    def run() -> None:
        s, _ = spec.new_game(rec.header.seed, spec.normalize_options(rec.header.options))
        for a in actions:
            s.to_act()
            s.decision()
            s.legal_actions()
            s.apply(a)
        assert s.outcome() is not None

    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    bot = c_bot()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "schmier.jsonl"
        for seed in range(args.seed, args.seed + 20):  # a long game: 10,000 decisions or more
            bots = [BotSpec("c-random", (*bot, str(seed * 10 + s))) for s in range(6)]
            result = trio.run(lambda: run_match("schmier", {}, bots, seed=seed, record_path=path,  # noqa: B023
                                                limits=Limits(sandbox="off")))
            if result.decisions >= 10_000:
                break
        n = result.decisions
        size = path.stat().st_size
        engine_only = resimulate(path)
        cpu: dict[str, list[float]] = {k: [] for k in ("command", "old_command", "fast", "typed", "engine",
                                                       "typer", "typer_verify")}
        env = cached_env(Path(tmp) / "pycache")
        command = [sys.executable, "-m", "referee_cli.main", "replay", "--verify", str(path)]
        old_command = [sys.executable, "-c", OLD_COMMAND, str(path)]
        typer_command = [sys.executable, "-c", MINIMAL_TYPER_COMMAND, "replay", "--verify", str(path)]
        typer_verify = [sys.executable, "-c", MINIMAL_VERIFY_COMMAND, "replay", "--verify", str(path)]
        for argv in (command, old_command, typer_command, typer_verify):
            warm_up(argv, env)
        for _ in range(args.runs):
            cpu["command"].append(child_cpu(command, env))
            cpu["old_command"].append(child_cpu(old_command, env))
            cpu["typer"].append(child_cpu(typer_command, env))
            cpu["typer_verify"].append(child_cpu(typer_verify, env))
            cpu["fast"].append(cpu_of(lambda: verify_fast(path)))
            cpu["typed"].append(cpu_of(lambda: verify_record(read_record(path))))
            cpu["engine"].append(cpu_of(engine_only))
        assert verify_fast(path) is not None
    med = {k: statistics.median(v) for k, v in cpu.items()}
    rate = {k: n / v for k, v in med.items()}
    ceiling = n / (med["typer"] + med["fast"])
    print(f"schmier record of {n} decisions ({size} bytes, seed {seed}); "
          f"decisions per CPU second, medians of {args.runs} (load {os.getloadavg()[0]:.2f}); {NOTE}:")
    print(f"  referee replay --verify (command)          {rate['command']:9.0f}   target >= 25000")
    print(f"  the command before the fast path (rebuilt) {rate['old_command']:9.0f}   "
          f"ratio {rate['command'] / rate['old_command']:.2f}  target >= 5")
    print(f"  in-process: fast path (verify_fast)        {rate['fast']:9.0f}")
    print(f"  in-process: typed path (read + verify)     {rate['typed']:9.0f}   "
          f"ratio fast / typed {rate['fast'] / rate['typed']:.2f}")
    print(f"  in-process: engine calls alone (ceiling)   {rate['engine']:9.0f}")
    print(f"  ceiling of the command: a minimal typer app running a command ({med['typer']:.3f} s) "
          f"+ the fast path in-process ({med['fast']:.3f} s)   {ceiling:9.0f}   "
          f"command at {rate['command'] / ceiling:.2f} of it")
    print(f"  the minimal typer app running the fast path in its command ({med['typer_verify']:.3f} s, a cold "
          f"process)   {rate['typer_verify']:9.0f}   command at {rate['command'] / rate['typer_verify']:.2f} of it")


if __name__ == "__main__":
    main()
