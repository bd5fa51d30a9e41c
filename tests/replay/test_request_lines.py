"""`referee replay --request N` and `referee ask`, against what a logging bot really received.

Each game of the three is played by real processes of ``logging_bot.py``, which
write every line they read to their stderr file; what the referee rebuilds from
the record must be those bytes exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match.ask import Replay
from referee.match.record import read_record

from ..conftest import PATIENT_FLAGS, built_once

ROOT = Path(__file__).resolve().parents[2]
LOGGER = Path(__file__).resolve().parent / "logging_bot.py"
KEEP = str(64 << 20)  # every line a bot got stays in its stderr file


def referee(*args, timeout=240):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True,
                          cwd=ROOT, timeout=timeout)


def bot(seed: int, *extra: str) -> str:
    return " ".join([sys.executable, str(LOGGER), str(seed), *extra])


# Seat 1 asks for no events: its history is hello and requests only.
GAMES = {
    "back-alley": ["--seed", "5"],
    "schmier": ["--seed", "6", "--option", "max_deals=2"],
    "pegs-and-jokers": ["--seed", "7", "--option", "max_turns=120"],
}


@pytest.fixture(scope="module", params=sorted(GAMES))
def logged(request, tmp_path_factory):
    """Each game, played once per test run (the tests only read it)."""
    game = request.param
    seats = {"back-alley": 4, "schmier": 6, "pegs-and-jokers": 4}[game]

    def build(folder):
        bots = [bot(s, "--no-events") if s == 1 else bot(s) for s in range(seats)]
        res = referee("play", game, *[x for b in bots for x in ("--bot", b)], *GAMES[game], "--record",
                      folder / "game.jsonl", "--stderr-dir", folder / "stderr", "--stderr-keep-bytes", KEEP, "-q",
                      *PATIENT_FLAGS)  # played to its end however busy the machine
        assert res.returncode == 0, res.stderr

    folder = built_once(tmp_path_factory, f"request-lines-logged-{game}", build)
    logs = {s: (folder / "stderr" / f"seat{s}-logging_bot.log").read_bytes() for s in range(seats)}
    return game, folder / "game.jsonl", logs


def requests_of(log: bytes) -> list[tuple[int, int]]:
    """(request id, end offset of its line) of every request in a seat's log."""
    out, pos = [], 0
    for line in log.splitlines(keepends=True):
        pos += len(line)
        if line.startswith(b'{"type":"request"'):
            out.append((json.loads(line)["id"], pos))
    return out


def test_every_rebuilt_history_is_the_bytes_the_bot_received(logged):
    game, record, logs = logged
    replay = Replay(read_record(record))
    for seat, log in logs.items():
        asked = requests_of(log)
        assert asked, f"seat {seat} got no request"
        for n, end in asked:
            assert b"".join(line.data for line in replay.lines_for(seat, n)) == log[:end], (seat, n)
    assert not any(b'"type":"event"' in line for line in logs[1].splitlines())  # it asked for none


def test_the_request_line_printed_is_the_one_the_bot_received(logged):
    game, record, logs = logged
    for seat in (0, 1):
        asked = requests_of(logs[seat])
        for i, (n, end) in enumerate([asked[0], asked[-1]]):
            res = referee("replay", record, "--request", n)
            assert res.returncode == 0, res.stderr
            start = logs[seat].rindex(b"\n", 0, end - 1) + 1
            assert res.stdout == logs[seat][start:end]
            if i:
                history = referee("replay", record, "--request", n, "--history")
                assert history.stdout == logs[seat][:end]


def test_events_are_those_since_the_seats_previous_request(logged):
    game, record, logs = logged
    (_, first_end), (n, end) = requests_of(logs[0])[:2]
    res = referee("replay", record, "--request", n, "--events")
    assert res.returncode == 0, res.stderr
    assert res.stdout == logs[0][first_end:end]
    lines = res.stdout.splitlines()
    assert all(line.startswith(b'{"type":"event"') for line in lines[:-1]) and len(lines) >= 2


def test_a_reasked_bot_gets_the_same_lines_as_the_recorded_seat(logged, tmp_path):
    """``ask`` feeds the seat's history through the live conversation: the logging bot in the
    seat of request N logs what the recorded one logged, up to request N."""
    game, record, logs = logged
    asked = requests_of(logs[0])
    n, end = asked[len(asked) // 2]
    res = referee("ask", record, n, "--bot", bot(99), "--stderr-dir", tmp_path)
    assert res.returncode == 0, res.stderr
    out = res.stdout.decode()
    assert f"request {n} ({game}, seat 0" in out and "verdict: legal" in out and "recorded: logger played" in out
    log = (tmp_path / "seat0-logging_bot.log").read_bytes()
    assert log[:end] == logs[0][:end]
    assert b"game_over" not in log  # it was asked, not played on


@pytest.mark.parametrize("args,fragment", [
    (["--request", "0"], "request 0: "),
    (["--request", "100000"], "request 100000: "),
    (["--events"], "--events and --history go with --request N"),
])
def test_a_request_that_is_not_in_the_record_is_one_line_and_status_2(logged, args, fragment):
    game, record, _ = logged
    res = referee("replay", record, *args)
    assert res.returncode == 2
    err = res.stderr.decode()
    assert fragment in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
