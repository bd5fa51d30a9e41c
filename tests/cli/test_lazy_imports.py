"""`referee --help` stays cheap: the CLI's modules import their heavy dependencies
(Trio, pydantic, rich, structlog, the engines, the tournament runner) only inside
the commands that use them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("trio", "pydantic", "pydantic_core", "structlog", "rich", "tournaments", "referee.games",
         "referee.match.runner", "referee.match.record")

CHECK = f"""
import sys
import referee.cli.main
heavy = {HEAVY!r}
print(" ".join(sorted(m for m in sys.modules if m in heavy or m.startswith(tuple(h + "." for h in heavy)))))
"""


def test_importing_the_cli_loads_none_of_the_heavy_dependencies():
    res = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60, check=True)
    assert res.stdout.split() == []


def test_help_lists_every_command_without_them():
    code = CHECK.replace("import referee.cli.main\n", "import referee.cli.main\n"
                         "try:\n    referee.cli.main.app(['--help'])\nexcept SystemExit:\n    pass\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    *help_text, loaded = res.stdout.rstrip("\n").split("\n")
    help_text = "\n".join(help_text)
    for command in ("play", "replay", "run"):
        assert command in help_text
    # typer renders help with rich when it is installed; nothing else heavy is loaded.
    assert [m for m in loaded.split() if not m.startswith("rich")] == []


def test_replay_verify_of_a_sound_record_loads_neither_structlog_nor_rich(tmp_path):
    from referee.cli.main import run

    record = tmp_path / "r.jsonl"
    assert run(["play", "schmier", *["--bot", "false"] * 3, "--record", str(record), "-q"]) == 3  # a forfeit
    code = CHECK.replace("import referee.cli.main\n", "import referee.cli.main\n"
                         f"assert referee.cli.main.run(['replay', '--verify', {str(record)!r}]) == 0\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    out, loaded = res.stdout.rstrip("\n").rsplit("\n", 1)
    assert out.startswith("OK: verified 0 decisions; the game ended by forfeit")
    assert not [m for m in loaded.split() if m.startswith(("structlog", "rich", "trio", "tournaments"))], loaded
