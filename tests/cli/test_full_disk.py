"""A disk that fills up during `referee play` and `referee run`: a real, tiny tmpfs.

Wanted (README "Exit status"): one line naming the file and the cause, exit
74, everything that had finished kept, no temporary file left behind, and a
later run, once there is room again, that finishes the job and writes the
standings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match.record import read_record
from referee.match.verify import verify_record
from tournaments.results import parse_results

from ..conftest import PATIENT_FLAGS

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tournaments" / "examples"
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
NO_SPACE = os.strerror(28)  # ENOSPC: "No space left on device"


def referee(*args, cwd=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=timeout)


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave_bytes: int) -> Path:
    """A ballast file that leaves about ``leave_bytes`` free on ``disk``."""
    st = os.statvfs(disk)
    free = st.f_bavail * st.f_frsize
    ballast = disk / "ballast"
    ballast.write_bytes(b"\0" * max(0, free - leave_bytes))
    return ballast


def error_line(stderr: str) -> str:
    """The one error line; anything else on stderr is progress, never a traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("referee:")]
    assert len(errors) == 1, stderr
    return errors[0]


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def test_play_on_a_full_disk_names_the_record_and_keeps_its_prefix(small_disk):
    ballast = fill(small_disk, 64 << 10)  # a Back Alley record is ~200 KB
    record = small_disk / "game.jsonl"
    res = referee("play", "back-alley", "--bot", BOT, "--bot", BOT, "--seed", 5, "--record", record, "-q",
                  *PATIENT_FLAGS)  # no timeout forfeit (exit 3) however busy the machine
    assert res.returncode == 74, (res.returncode, res.stderr)
    assert error_line(res.stderr) == f"referee: error: cannot write record {record}: {NO_SPACE}"
    assert res.stdout == ""
    rec = read_record(record)  # what was written is a readable prefix
    assert rec.truncated and rec.result is None and len(rec.entries) > 50
    assert not temp_files(small_disk)
    shown = referee("replay", record)
    assert shown.returncode == 0 and "record is truncated" in shown.stdout, shown.stderr

    ballast.unlink()  # room again: the same command with --force plays the game through over the truncated record
    res = referee("play", "back-alley", "--bot", BOT, "--bot", BOT, "--seed", 5, "--record", record, "-q", "--force",
                  *PATIENT_FLAGS)
    assert res.returncode == 0, res.stderr
    assert verify_record(read_record(record)).ok


def test_run_on_a_full_disk_keeps_finished_games_and_resumes_when_there_is_room(small_disk):
    ballast = fill(small_disk, 560 << 10)  # two or so of the six ~200 KB records fit
    out = small_disk / "out"
    args = ("run", EXAMPLES / "back-alley.toml", "-n", 1, "-j", 1, "--output", out, "-q")
    res = referee(*args)
    assert res.returncode == 74, (res.returncode, res.stderr)
    line = error_line(res.stderr)
    assert re.match(rf"referee: error: cannot write (record )?{re.escape(str(out))}/", line), line
    assert f": {NO_SPACE}; the " in line and "run the same command again to resume" in line, line
    assert res.stdout == ""
    assert not temp_files(small_disk), temp_files(small_disk)
    parsed = parse_results((out / "results.jsonl").read_bytes())
    assert 1 <= len(parsed.results) < 6, parsed.results
    assert f"the {len(parsed.results)} finished games are kept in {out / 'results.jsonl'}" in line
    for result in parsed.results.values():  # each finished game's record is whole
        assert verify_record(read_record(out / result.record)).ok

    ballast.unlink()
    res = referee(*args)
    assert res.returncode == 0, res.stderr
    assert f"resuming, {len(parsed.results)} already played" in res.stderr
    standings = json.loads((out / "standings.json").read_text())
    assert standings["complete"] and standings["games_played"] == 6
    assert (out / "standings.csv").is_file() and not temp_files(small_disk)
