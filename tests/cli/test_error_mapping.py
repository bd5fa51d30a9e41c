"""Errors become exit statuses in one place (``referee_cli.main.run``)."""

from __future__ import annotations

import errno
import re
import subprocess
import sys
from pathlib import Path

import pytest

import referee.match.record
import referee.match.verify
from referee.errors import (
    EXIT_BUG,
    EXIT_OUTPUT,
    EXIT_USER,
    OutputError,
    RefereeBug,
    UserFault,
    user_fault_in,
)
from referee.games import InvalidOptions
from referee.match.record import RecordError
from referee.match.runner import RefereeError
from referee_cli.errors import UserError
from tournaments.config import ConfigError
from tournaments.runner import TournamentError
from tournaments.workers import WorkerError

from .bad_input import referee_in_process

ROOT = Path(__file__).resolve().parents[2]


def test_every_error_class_sits_under_one_of_the_two_bases():
    for cls in (UserError, ConfigError, RecordError, InvalidOptions, OutputError):
        assert issubclass(cls, UserFault) and not issubclass(cls, RefereeBug), cls
    for cls in (RefereeError, TournamentError, WorkerError):
        assert issubclass(cls, RefereeBug) and not issubclass(cls, UserFault), cls
    assert UserFault.exit_code == EXIT_USER == 2 and OutputError.exit_code == EXIT_OUTPUT == 74
    assert RefereeBug.exit_code == EXIT_BUG == 70


def test_a_user_fault_is_one_line_whatever_its_text():
    assert str(UserFault("two\nlines  and\ttabs")) == "two lines and tabs"


def test_groups_and_full_disk_os_errors_map_to_the_user_fault_they_stand_for():
    full = OSError(errno.ENOSPC, "No space left on device", "/x/r.jsonl")
    fault = user_fault_in(ExceptionGroup("g", [full, ExceptionGroup("h", [UserError("bad")])]))
    assert isinstance(fault, OutputError) and str(fault) == "cannot write /x/r.jsonl: No space left on device"
    assert user_fault_in(ExceptionGroup("g", [UserError("bad"), RuntimeError("bug")])) is None
    assert user_fault_in(OSError(errno.EACCES, "Permission denied")) is None


def test_a_bug_is_one_line_with_the_path_of_its_saved_traceback(tmp_path, monkeypatch):
    record = tmp_path / "r.jsonl"
    code, _, err = referee_in_process("play", "schmier", *["--bot", "false"] * 3, "--record", record, "-q")
    assert code == 3, err  # every bot exits at once: a forfeit

    def explode(path):
        raise KeyError("a bug in verify")

    monkeypatch.setattr(referee.match.verify, "verify_fast", explode)  # what --verify calls first
    code, out, err = referee_in_process("replay", record, "--verify")
    assert code == 70
    (line,) = err.splitlines()
    match = re.fullmatch(r"referee: internal error \(a bug in the referee\): KeyError: 'a bug in verify'; "
                         r"traceback saved in (\S+); please report it", line)
    assert match, line
    saved = Path(match.group(1))
    try:
        text = saved.read_text()
        assert "Traceback (most recent call last)" in text and "explode" in text and "KeyError" in text
    finally:
        saved.unlink()


def test_usage_errors_keep_clicks_status_and_say_one_line():
    code, _, err = referee_in_process("replay")
    assert code == 2 and len(err.splitlines()) == 1 and err.startswith("referee: error: Missing argument")
    code, _, err = referee_in_process("no-such-command")
    assert code == 2 and len(err.splitlines()) == 1


def test_the_installed_entry_point_exits_with_the_mapped_status(tmp_path):
    res = subprocess.run([sys.executable, "-m", "referee", "replay", tmp_path / "missing.jsonl"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 2 and res.stderr == f"referee: error: {tmp_path / 'missing.jsonl'}: no such file\n"


@pytest.mark.parametrize(("exc", "said"), [
    (KeyboardInterrupt(), ""),  # typer's own quiet Exit(130)
    (BaseExceptionGroup("g", [KeyboardInterrupt()]), "referee: interrupted\n"),  # out of a Trio nursery
])
def test_an_interrupt_is_status_130(exc, said, monkeypatch):
    def interrupted(rec):
        raise exc

    monkeypatch.setattr(referee.match.record, "read_record", interrupted)
    code, _, err = referee_in_process("replay", "x.jsonl")
    assert code == 130 and err == said
