"""The CLI's start-up CPU against minimal programs doing the same, in the same run.

    python benchmarks/cli_startup.py [--runs 7]

* ``referee --help`` against a minimal typer app's ``--help`` (two commands,
  one option each): what the referee's own imports and command registration
  add.  Target <= 2x.
* ``referee play`` from its start to its first request against a minimal Trio
  script that spawns the same four bots, says hello to each, reads each
  ``ready`` and sends one request.  The bots are ``first_request_bot.py``
  probes that write their parent's CPU time at the first request and exit, so
  both figures are the parent's CPU up to that moment, read the same way
  (clock ticks of /proc/PID/stat).  Bots run unsandboxed in both (the
  baseline has no sandbox, and a sandboxed probe cannot see its parent).
  Target <= 1.5x.  The ceiling printed beside it is the CPU of importing the
  stack the referee is built on (typer, Trio, pydantic, structlog) and doing
  nothing: no start-up of the referee can be below it.  The floor after it
  is the minimal Trio script run after importing the referee's own modules
  that play needs before its first request (``PLAY_MODULES``): what is left
  of play's start-up once its code does nothing but those imports.

CPU times (user + system) of the child process, medians of ``--runs`` runs,
with ``python -c pass`` for scale, every module's bytecode cached
(``bytecode.py``).  Standard library + the project only.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from bytecode import NOTE, cached_env  # noqa: E402

PY = sys.executable
REFEREE = [PY, "-m", "referee_cli.main"]
PROBE = [PY, str(ROOT / "first_request_bot.py")]

MINIMAL_TYPER = '''
import typer
app = typer.Typer(add_completion=False, no_args_is_help=True)
@app.command()
def play(game: str, bot: list[str] = typer.Option(...)) -> None:
    """Play one game."""
@app.command()
def replay(record: str, verify: bool = False) -> None:
    """Show a record."""
app()
'''

MINIMAL_TRIO = '''
import subprocess, sys, trio
async def main():
    argv = sys.argv[1:]
    procs = [await trio.lowlevel.open_process(argv + [f"{argv[-1]}.{s}"], stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE) for s in range(4)]
    for s, p in enumerate(procs):
        await p.stdin.send_all(b'{"type":"hello","game":"back-alley","seat":%d}\\n' % s)
    for p in procs:
        await p.stdout.receive_some(65536)
    await procs[0].stdin.send_all(b'{"type":"request","id":1,"seat":0,"decision":"bid","state":{},'
                                  b'"legal":["1","2"],"time_ms":1000}\\n')
    await procs[0].wait()
    for p in procs[1:]:
        p.kill()
        await p.wait()
trio.run(main)
'''


ENV: dict[str, str] = {}  # the children's environment (main sets it: bytecode cached)

# What `referee play` cannot start a game without: the CLI and the play command, the match runner
# (with the record's and the protocol's pydantic models it imports) and the limits' model that checks
# play's flags (tournaments.config), on the fixed stack; imported, and then the minimal Trio script.
PLAY_MODULES = ("import typer, trio, pydantic, structlog, typer._adapters, referee_cli.main, referee_cli.play, "
                "referee.logging, referee_cli.common, referee.match.runner, tournaments.config\n")


def child_cpu(argv: list[str], **kw) -> float:
    """CPU seconds (user + system) the command used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def first_request_cpu(argv_for: callable, tmp: Path, tag: str) -> float:
    """The parent's CPU at its first request, as the probe bot that got it wrote it."""
    out = tmp / tag
    for f in tmp.glob(f"{tag}*"):
        f.unlink()
    subprocess.run(argv_for(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   timeout=120, cwd=tmp, env=ENV)
    written = sorted(tmp.glob(f"{tag}*"))
    assert written, f"no probe wrote a figure for {tag}"
    return min(float(f.read_text()) for f in written)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        typer_app = tmp / "minimal_typer.py"
        typer_app.write_text(MINIMAL_TYPER)
        trio_script = tmp / "minimal_trio.py"
        trio_script.write_text(MINIMAL_TRIO)
        floor_script = tmp / "minimal_play_floor.py"  # not named like a probe tag (t, p, f): those are deleted
        floor_script.write_text(PLAY_MODULES + MINIMAL_TRIO)

        def play(sandbox: str):
            return lambda out: [*REFEREE, "play", "back-alley", "--seed", "1", "--record", str(tmp / "r.jsonl"),
                                "--sandbox", sandbox, "-q",
                                *[a for s in range(4) for a in ("--bot", " ".join([*PROBE, f"{out}.{s}"]))]]

        figures: dict[str, list[float]] = {k: [] for k in
                                           ("pass", "typer", "referee", "trio", "play", "stack", "modules")}
        ENV.update(cached_env(tmp / "bytecode-cache"))
        for i in range(args.runs + 1):  # round 0 is a warm-up that fills the bytecode cache
            if i == 1:
                for v in figures.values():
                    v.clear()
            figures["pass"].append(child_cpu([PY, "-c", "pass"]))
            figures["typer"].append(child_cpu([PY, str(typer_app), "--help"]))
            figures["referee"].append(child_cpu([*REFEREE, "--help"]))
            figures["trio"].append(first_request_cpu(lambda out: [PY, str(trio_script), *PROBE, str(out)], tmp, "t"))
            figures["play"].append(first_request_cpu(play("off"), tmp, "p"))
            figures["stack"].append(child_cpu([PY, "-c", "import typer, trio, pydantic, structlog"]))
            figures["modules"].append(first_request_cpu(lambda out: [PY, str(floor_script), *PROBE, str(out)],
                                                        tmp, "f"))
    med = {k: statistics.median(v) for k, v in figures.items()}
    print(f"CPU seconds, medians of {args.runs} runs (load {os.getloadavg()[0]:.2f}); {NOTE}:")
    print(f"  python -c pass                          {med['pass']:.3f}")
    print(f"  minimal typer app --help                {med['typer']:.3f}")
    print(f"  referee --help                          {med['referee']:.3f}   "
          f"ratio {med['referee'] / med['typer']:.2f}  target <= 2")
    print(f"  minimal Trio script, to first request   {med['trio']:.3f}")
    print(f"  referee play (--sandbox off), to first  {med['play']:.3f}   "
          f"ratio {med['play'] / med['trio']:.2f}  target <= 1.5")
    print(f"  ceiling: import typer, trio, pydantic, structlog (the fixed stack, nothing run)  {med['stack']:.3f}   "
          f"ratio {med['stack'] / med['trio']:.2f}")
    print(f"  floor of play as built: the minimal Trio script after importing the modules play needs "
          f"(PLAY_MODULES), to first request  {med['modules']:.3f}   ratio {med['modules'] / med['trio']:.2f}")


if __name__ == "__main__":
    main()
