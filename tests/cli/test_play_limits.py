"""`referee play` resource-limit flags and a misbehaving bot, as a user runs them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
MISBEHAVING = ROOT / "sample_bots" / "misbehaving"


def referee(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


def test_limit_flags_reach_the_bot_and_the_record(tmp_path):
    record = tmp_path / "r.jsonl"
    probe = f"{sys.executable} {MISBEHAVING / 'limits_probe.py'}"
    res = referee("play", "back-alley", "--bot", probe, "--bot", BOT, "--seed", 1, "--record", record,
                  "--memory-mb", 300, "--cpu-s", 7, "--max-open-files", 40, "--max-processes", 5,
                  "--max-line-bytes", 4096, "--stderr-keep-bytes", 100, "--handshake-ms", 2000)
    assert res.returncode == 3, res.stderr  # the probe exits: a forfeit
    assert "forfeit: seat 0 (limits_probe) — exited" in res.stdout
    assert f"| RLIMIT_AS {300 << 20} {300 << 20}" in res.stdout  # its last stderr lines are shown
    assert "| RLIMIT_CPU 7 8" in res.stdout and "| RLIMIT_NOFILE 40 40" in res.stdout
    header = json.loads(record.read_text().splitlines()[0])
    assert {k: header["limits"][k] for k in ("memory_mb", "cpu_s", "max_open_files", "max_processes",
                                             "max_line_bytes", "stderr_keep_bytes")} == {
        "memory_mb": 300, "cpu_s": 7, "max_open_files": 40, "max_processes": 5,
        "max_line_bytes": 4096, "stderr_keep_bytes": 100}
    kept = record.with_name("r.stderr") / "seat0-limits_probe.log"
    assert kept.read_bytes().startswith(b"RLIMIT_AS") and b"more bytes of stderr dropped" in kept.read_bytes()


def test_zero_means_no_cap(tmp_path):
    record = tmp_path / "r.jsonl"
    probe = f"{sys.executable} {MISBEHAVING / 'limits_probe.py'}"
    res = referee("play", "back-alley", "--bot", probe, "--bot", BOT, "--record", record, "-q",
                  "--memory-mb", 0, "--max-processes", 0, "--max-open-files", 0)
    assert res.returncode == 3, res.stderr  # the probe exits: a forfeit
    limits = json.loads(record.read_text().splitlines()[0])["limits"]
    assert limits["memory_mb"] is None and limits["max_processes"] is None and limits["max_open_files"] is None


def test_a_hanging_bot_is_reported_with_its_seat_reason_and_stderr(tmp_path):
    hang = f"{sys.executable} {MISBEHAVING / 'hang.py'}"
    res = referee("play", "back-alley", "--bot", BOT, "--bot", hang, "--seed", 3,
                  "--record", tmp_path / "r.jsonl", "--decision-ms", 300)
    assert res.returncode == 3, res.stderr  # a forfeit
    # One command per team: the hang bot plays seats 1 and 3; whichever hangs first forfeits.
    assert re.search(r"Result: forfeit: seat [13] \(hang\) — timeout: no reply to request", res.stdout), res.stdout
    assert "team 0 (seats 0, 2: random) wins" in res.stdout  # the name its ready gave
    assert "| hang: hanging on request" in res.stdout
    shown = referee("replay", tmp_path / "r.jsonl")
    assert re.search(r"Fault: seat [13] — timeout", shown.stdout) and "Result: forfeit (timeout)" in shown.stdout


@pytest.mark.parametrize(("flag", "value", "needle"), [
    ("--memory-mb", -1, "--memory-mb must be 0 or more"),
    ("--max-processes", -3, "--max-processes must be 0 or more"),
    ("--max-line-bytes", 10, "--max-line-bytes must be at least 1024"),
])
def test_bad_limit_flags_are_one_line_user_errors(flag, value, needle, tmp_path):
    res = referee("play", "back-alley", "--bot", BOT, "--bot", BOT, flag, value, "--record", tmp_path / "r.jsonl")
    assert res.returncode == 2
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], res.stderr
