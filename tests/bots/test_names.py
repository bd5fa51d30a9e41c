"""What a bot is called: its `ready` name made safe to print, else its command's name
(``env VAR=...`` skipped), unless ``--name`` says otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match.types import NAME_MAX, default_bot_name, display_name

from ..conftest import PATIENT_FLAGS

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "random_bot.py"


@pytest.mark.parametrize(("argv", "name"), [
    (("env", "X=1", "./bot"), "bot"),
    (("/usr/bin/env", "X=1", "Y=2", "python3", "-u", "bots/my_bot.py"), "my_bot"),
    (("env", "-i", "HOME=/tmp", "node", "b.js"), "b"),
    (("env", "-u", "HOME", "--chdir", "/tmp", "./x.sh"), "x"),
    (("env", "--unset=HOME", "target/release/fast"), "fast"),
    (("env",), "env"),
    (("python3", "sample_bots/random_bot.py", "7"), "random_bot"),
    (("./bin/mybot",), "mybot"),
])
def test_the_command_name_skips_an_env_prefix(argv, name):
    assert default_bot_name(argv) == name


def test_the_ready_name_is_made_printable_and_short():
    assert display_name("  Deep\tBlue\n\x1b[31m 2 ", "fallback") == "Deep Blue [31m 2"
    assert display_name("a\x1bb", "fallback") == "a b"
    assert display_name("x" * 500, "fallback") == "x" * NAME_MAX
    assert display_name("a" * (NAME_MAX - 1) + " tail", "f") == "a" * (NAME_MAX - 1)
    for nothing in ("", "   ", "\x00\x07\n", None, 7):
        assert display_name(nothing, "fallback") == "fallback"
    assert display_name("Zoë 🂡", "f") == "Zoë 🂡"


def play(*bots, extra=()):
    args = [sys.executable, "-m", "referee", "play", "back-alley", "--seed", "3", "--sandbox", "off",
            *PATIENT_FLAGS, *extra]  # the seed's winner, not a timeout, decides the result
    for bot in bots:
        args += ["--bot", bot]
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_play_shows_the_sanitised_ready_name_or_the_command_name_behind_env(tmp_path):
    weird = "Deep\tBlue\x1b" + "!" * 60
    team0 = subprocess.list2cmdline(["env", "X=1", sys.executable, str(RANDOM), "1", "--name", weird])
    team1 = subprocess.list2cmdline(["env", "X=1", sys.executable, str(RANDOM), "2", "--name", ""])
    record = tmp_path / "game.jsonl"
    res = play(team0, team1, extra=("--record", str(record)))
    assert res.returncode == 0, res.stderr
    shown = display_name(weird, "?")
    assert shown == ("Deep Blue " + "!" * 60)[:NAME_MAX]
    result = next(line for line in res.stdout.splitlines() if line.startswith("Result:"))
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[-1]["outcome"]["status"] == "win", "pick a seed that one team wins"
    winner = lines[-1]["outcome"]["winners"][0]
    assert "env" not in result
    assert (f"seats 0, 2: {shown}" if winner == 0 else "seats 1, 3: random_bot") in result
    ready = next(line for line in lines if line["record"] == "ready")
    assert ready["names"] == [shown, "random_bot", shown, "random_bot"]
    assert lines[-1]["names"] == ready["names"]
    folder = record.with_name("game.stderr")  # files are named before any ready: the command's name
    assert sorted(p.name for p in folder.iterdir()) == [f"seat{s}-random_bot.log" for s in range(4)]


def test_a_name_given_with_dash_dash_name_wins_over_the_ready_name():
    bot = f"{sys.executable} {RANDOM} 1"
    res = play(bot, bot, extra=("--name", "Alpha", "--name", "Beta"))
    assert res.returncode == 0, res.stderr
    result = next(line for line in res.stdout.splitlines() if line.startswith("Result:"))
    assert ("Alpha" in result or "Beta" in result) and "random" not in result
