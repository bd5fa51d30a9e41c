"""The one bot-command check (referee/match/commands.py), used by `referee play` and tournaments."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from referee.match.commands import CommandError, check_command, script_of
from referee_cli.common import check_bot_command
from tournaments.config import ConfigError, Entrant, check_entrant


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "bot.py").write_text("print('hi')\n")
    run = tmp_path / "run.sh"
    run.write_text("#!/bin/sh\nexit 0\n")
    run.chmod(0o755)
    (tmp_path / "notes.txt").write_text("not a program\n")
    (tmp_path / "sub").mkdir()
    return tmp_path


@pytest.mark.parametrize("argv", [
    [sys.executable, "bot.py"],
    [sys.executable, "-u", "bot.py", "--fast"],
    ["sh", "run.sh"],
    ["./run.sh", "bot.py"],
    ["./run.sh", "not-a-script-name"],
    [sys.executable, "-c", "import missing.py"],  # code, not a script file
    ["sh", "-c", "python3 missing.py"],
    [sys.executable, "-m", "missing.py"],
    [sys.executable, "data.txt"],  # no script suffix: the interpreter's business
])
def test_commands_that_can_start_pass(folder, argv):
    check_command(argv, folder)


@pytest.mark.parametrize(("argv", "message"), [
    ([], "the command is empty"),
    ([""], "the command is empty"),
    (["no-such-program-xyz"], "command 'no-such-program-xyz' not found on PATH"),
    (["./missing"], "command './missing' not found (looked in "),
    (["./notes.txt"], "command './notes.txt' is not an executable file"),
    (["./sub"], "command './sub' is not an executable file"),
    ([sys.executable, "missing.py"], "script 'missing.py' not found ("),
    ([sys.executable, "-u", "missing.py"], "script 'missing.py' not found ("),
    ([sys.executable, "missing.mjs"], "script 'missing.mjs' not found ("),  # any program that exists:
    ([sys.executable, "-jar", "missing.jar"], "script 'missing.jar' not found ("),  # the script is checked
    (["./run.sh", "missing.py"], "script 'missing.py' not found ("),
])
def test_commands_that_cannot_start_are_refused_in_one_line(folder, argv, message):
    with pytest.raises(CommandError) as info:
        check_command(argv, folder)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_missing_working_directory_is_refused(tmp_path):
    with pytest.raises(CommandError, match="working directory .* does not exist"):
        check_command([sys.executable, "bot.py"], tmp_path / "nowhere")


def test_placeholders_are_checked_only_when_they_are_not_filled_in_later(folder):
    for argv in (["{prog}"], [sys.executable, "{seed}.py"]):
        check_command(argv, folder, placeholders=True)
        with pytest.raises(CommandError):
            check_command(argv, folder)


def test_the_script_is_the_first_argument_that_is_no_option():
    assert script_of(["python3", "-u", "-X", "dev", "bot.py"]) is None  # "dev" is the first non-option
    assert script_of(["python3", "-u", "bot.py", "other.py"]) == "bot.py"
    assert script_of(["python3", "-m", "bot.py"]) is None
    assert script_of(["bash", "-c", "python3 bot.py"]) is None
    assert script_of(["./bot"]) is None


@pytest.mark.parametrize("argv", [
    ["no-such-program-xyz"],
    ["./missing"],
    ["./notes.txt"],
    [sys.executable, "missing.py"],
    [sys.executable, "-u", "missing.rb"],
    [sys.executable, "missing.lua"],
])
def test_referee_play_and_tournaments_refuse_the_same_commands_with_the_same_words(folder, argv, monkeypatch):
    with pytest.raises(CommandError) as info:
        check_command(argv, folder)
    message = str(info.value)
    with pytest.raises(ConfigError) as tournament:
        check_entrant(Entrant("bot", tuple(argv), folder))
    assert str(tournament.value) == f"entrant 'bot': {message}"
    monkeypatch.chdir(folder)
    with pytest.raises(Exception) as play:  # the CLI's one-line user error
        check_bot_command(shlex.join(argv))
    assert str(play.value).endswith(f": {message}") and "\n" not in str(play.value)


def test_both_callers_accept_what_the_check_accepts(folder, monkeypatch):
    argv = [sys.executable, "-u", "bot.py"]
    check_entrant(Entrant("bot", tuple(argv), folder))
    monkeypatch.chdir(folder)
    assert check_bot_command(shlex.join(argv)) == tuple(argv)
