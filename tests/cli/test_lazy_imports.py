"""`referee --help` stays cheap: the CLI's modules import their heavy dependencies
(Trio, pydantic, rich, structlog, the engines, the tournament runner) only inside
the commands that use them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee_cli.main import COMMANDS, run

from ..conftest import built_once

HEAVY = ("trio", "pydantic", "pydantic_core", "structlog", "rich", "tournaments", "referee.games",
         "referee.match.runner", "referee.match.record")

CHECK = f"""
import sys
import referee_cli.main
heavy = {HEAVY!r}
print(" ".join(sorted(m for m in sys.modules if m in heavy or m.startswith(tuple(h + "." for h in heavy)))))
"""


def test_importing_the_cli_loads_none_of_the_heavy_dependencies():
    res = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60, check=True)
    assert res.stdout.split() == []


def test_help_lists_every_command_without_them():
    code = CHECK.replace("import referee_cli.main\n", "import referee_cli.main\n"
                         "try:\n    referee_cli.main.app(['--help'])\nexcept SystemExit:\n    pass\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    *help_text, loaded = res.stdout.removesuffix("\n").split("\n")  # the last line lists the modules (maybe none)
    help_text = "\n".join(help_text)
    for command in ("play", "replay", "run"):
        assert command in help_text
    # The help is click's plain text (rich_markup_mode=None): nothing heavy is loaded, rich neither.
    assert loaded.split() == []


def test_replay_verify_of_a_sound_record_loads_neither_structlog_nor_rich(tmp_path):
    record = tmp_path / "r.jsonl"
    assert run(["play", "schmier", *["--bot", "false"] * 3, "--record", str(record), "-q"]) == 3  # a forfeit
    code = CHECK.replace("import referee_cli.main\n", "import referee_cli.main\n"
                         f"assert referee_cli.main.run(['replay', '--verify', {str(record)!r}]) == 0\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    out, loaded = res.stdout.rstrip("\n").rsplit("\n", 1)
    assert out.startswith("OK: verified 0 decisions; the game ended by forfeit")
    assert not [m for m in loaded.split() if m.startswith(("structlog", "rich", "trio", "tournaments"))], loaded


ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
ENGINES = ("referee.games.back_alley", "referee.games.schmier", "referee.games.pegs_and_jokers")
COMMAND_MODULES = tuple(COMMANDS.values())

LOADED = """
import sys
import referee_cli.main
code = referee_cli.main.run({argv!r})
print(code)
print(" ".join(sorted(sys.modules)))
"""


def modules_loaded_by(argv: list[str]) -> tuple[int, str, set[str]]:
    """The exit status, the output and the modules a command line imported, in a fresh process."""
    res = subprocess.run([sys.executable, "-c", LOADED.format(argv=argv)], capture_output=True, text=True,
                         timeout=120, check=True)
    *out, code, loaded = res.stdout.rstrip("\n").split("\n")
    return int(code), "\n".join(out), set(loaded.split())


@pytest.fixture(scope="module")
def schmier_record(tmp_path_factory):
    """Played once per test run: the tests only read it."""
    def build(folder):
        assert run(["play", "schmier", *["--bot", BOT] * 3, "--seed", "3", "--record", str(folder / "schmier.jsonl"),
                    "--sandbox", "off", "-q"]) == 0

    return built_once(tmp_path_factory, "lazy-imports-schmier-record", build) / "schmier.jsonl"


def test_replay_verify_imports_only_its_games_engine_its_command_and_no_record_models(schmier_record):
    code, out, loaded = modules_loaded_by(["replay", "--verify", str(schmier_record)])
    assert code == 0 and out.startswith("OK: verified "), out
    assert {m for m in ENGINES if m in loaded} == {"referee.games.schmier"}
    assert {m for m in COMMAND_MODULES if m in loaded} == {"referee_cli.replay"}
    # A sound record is read without the record's pydantic models and without the match runner.
    for module in ("referee.match.record", "referee.match.runner", "referee_cli.common", "referee.logging",
                   "structlog", "rich", "trio", "tournaments"):
        assert module not in loaded, module


def test_replay_verify_of_a_damaged_record_still_names_the_divergence(schmier_record, tmp_path):
    lines = schmier_record.read_bytes().split(b"\n")
    i = next(i for i, line in enumerate(lines) if line.startswith(b'{"record":"decision"'))
    lines[i] = lines[i].replace(b'"seat":', b'"seat":9', 1)  # the fast path cannot vouch for it: typed
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"\n".join(lines))
    code, out, loaded = modules_loaded_by(["replay", "--verify", str(damaged)])
    # A seat the game does not have (9x of 6) makes the line corrupt: the verdict names it.
    assert code == 1 and out.startswith(f"DIVERGENCE: record is truncated (unreadable line {i + 1}: seat 9"), out
    assert "the game has seats 0 … 5" in out
    assert "referee.match.record" in loaded  # the typed path, models and all, said why


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_commands_help_imports_no_other_commands_module(command):
    code, out, loaded = modules_loaded_by([command, "--help"])
    assert code == 0 and "Usage:" in out
    assert {m for m in COMMAND_MODULES if m in loaded} == {COMMANDS[command]}
    # (The root callback configures logging before a command's --help: structlog may be there.)
    assert not [m for m in loaded if m.startswith(("tournaments", "trio", "referee.match.runner")) or m in ENGINES]


def test_the_root_help_lists_the_commands_in_their_order_after_one_was_run(schmier_record):
    # In one process (as the tests run commands): a command registered alone first, then --help.
    res = subprocess.run([sys.executable, "-c", "import referee_cli.main as m\n"
                          f"assert m.run(['replay', '--verify', {str(schmier_record)!r}]) == 0\n"
                          "m.run(['--help'])"], capture_output=True, text=True, timeout=120, check=True)
    commands = res.stdout.split("\nCommands:\n", 1)[1].splitlines()  # click's plain help: "  play  Play one..."
    listed = [line.split()[0] for line in commands if line.startswith("  ") and line.split()[0] in COMMANDS]
    assert listed == list(COMMANDS)


STRUCTLOG_ALONE = """
import sys
{before}
from referee.logging import configure_logging, structlog
loaded = sorted(m for m in sys.modules if m == "rich" or m.startswith("rich."))
import rich.pretty, rich.traceback  # still importable: the marks are gone
configure_logging("info")
structlog.get_logger().info("game_started", game=7)  # and the logger still writes its line
print(" ".join(loaded), "|")
"""


@pytest.mark.parametrize("before", ["", "import rich.console"], ids=["rich-not-loaded", "rich-loaded"])
def test_structlog_is_imported_without_its_development_consoles_rich_modules(before):
    """A game worker logs key=value lines: structlog's optional rich tracebacks and pretty-printer
    (~0.1 s of CPU per process) are not loaded with it, and rich stays importable afterwards."""
    code = STRUCTLOG_ALONE.format(before=before)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    loaded = res.stdout.split("|")[0].strip()
    assert not {"rich.traceback", "rich.pretty"} & set(loaded.split()), loaded
    if not before:
        assert loaded == "", loaded  # rich itself is not loaded for structlog
    assert re.fullmatch(r"timestamp='[^']+' level='info' event='game_started' game=7\n", res.stderr), res.stderr
