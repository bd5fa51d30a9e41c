"""A record is data: nothing in it runs a command, turns the sandbox off or lifts a limit.

The crafted record is a real game's record whose header names, for every
seat, a probe bot (``tests/fixtures/host_probe_bot.py``) with its own limits
``"sandbox": "off"``, no memory cap and no process cap.  On the referee before
this fix, ``referee ask RECORD N --from --record NEW --sandbox required`` ran
those commands on the host, as root, unlimited: the probe read /etc/shadow and
wrote a file on the host.  Now ``--from`` runs only the bots named on its
command line, or the record's after ``--bots-from-record`` (printed before
anything starts), and always under the operator's sandbox and limits.

Real ``referee`` subprocesses throughout; the probe's own report (its stderr,
kept by the referee) and the marker file on the host are what is checked.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match import bubblewrap

from ..conftest import built_once

ROOT = Path(__file__).resolve().parents[2]
RANDOM = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
PROBE = ROOT / "tests" / "fixtures" / "host_probe_bot.py"
UNLEASHED = {"sandbox": "off", "memory_mb": None, "max_processes": None, "cpu_s": None, "max_open_files": None}
NOBODY = 65534
DEFAULT_AS = 1024 << 20  # play's default --memory-mb, in bytes

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or bubblewrap.effective_mode("auto") != "bwrap",
                                reason="needs root (to read /etc/shadow unsandboxed) and a working bubblewrap")


def referee(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A genuine record, played once per test run: the tests only read it (and craft copies)."""
    def build(folder):
        res = referee("play", "back-alley", "--bot", RANDOM + " 1", "--bot", RANDOM + " 2", "--seed", 5,
                      "--record", folder / "game.jsonl", "-q")
        assert res.returncode == 0, res.stderr

    return built_once(tmp_path_factory, "record-is-data-game", build) / "game.jsonl"


def crafted(game: Path, folder: Path) -> tuple[Path, Path]:
    """``game`` with a header whose seats run the probe unsandboxed and unlimited; and the marker path."""
    marker = folder / "marker"
    lines = game.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    for seat in header["seats"]:
        seat["command"] = [sys.executable, str(PROBE), str(marker)]
        seat["limits"] = {**(header["limits"] or {}), **UNLEASHED}
    header["limits"] = {**(header["limits"] or {}), **UNLEASHED}
    header["sandbox"] = "off"
    path = folder / "crafted.jsonl"
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
    return path, marker


def probes(stderr_dir: Path) -> list[str]:
    found = [line for f in sorted(stderr_dir.iterdir()) for line in f.read_text().splitlines()
             if line.startswith("PROBE ")]
    assert found, f"the probe reported nothing in {stderr_dir}"
    return found


def assert_contained(lines: list[str], marker: Path) -> None:
    for line in lines:
        assert f"uid={NOBODY} " in line and "shadow=refused" in line and f"as={DEFAULT_AS} " in line, line
    assert not marker.exists(), marker.read_text()


def test_play_on_does_not_run_the_commands_a_record_names(game, tmp_path):
    record, marker = crafted(game, tmp_path)
    new = tmp_path / "new.jsonl"
    res = referee("ask", record, 1, "--from", "--record", new, "--sandbox", "required")
    assert not marker.exists(), "a command from the record ran on the host: " + marker.read_text()
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.startswith("referee: error: ") and len(res.stderr.splitlines()) == 1, res.stderr
    assert "--bots-from-record" in res.stderr and "--bot" in res.stderr
    assert not new.exists()


def test_the_record_s_commands_run_only_when_asked_printed_first_and_sandboxed(game, tmp_path):
    record, marker = crafted(game, tmp_path)
    new, err = tmp_path / "new.jsonl", tmp_path / "err"
    res = referee("ask", record, 1, "--from", "--record", new, "--bots-from-record", "--stderr-dir", err)
    assert res.returncode in (0, 3), res.stdout + res.stderr
    command = shlex.join([sys.executable, str(PROBE), str(marker)])
    out = res.stdout
    assert out.index(f"seat 0: {command}") < out.index("What-if from request 1"), out
    assert out.count(command) == 4, out
    assert_contained(probes(err), marker)


def test_the_operator_s_sandbox_setting_holds_against_the_seats_own_limits(game, tmp_path):
    record, marker = crafted(game, tmp_path)
    new, err = tmp_path / "new.jsonl", tmp_path / "err"
    probe = shlex.join([sys.executable, str(PROBE), str(marker)])
    res = referee("ask", record, 1, "--from", "--record", new, "--bot", probe, "--bot", probe,
                  "--sandbox", "required", "--stderr-dir", err)
    assert res.returncode in (0, 3), res.stdout + res.stderr
    assert_contained(probes(err), marker)
    assert "Sandbox: off" not in res.stdout


def test_re_asking_one_decision_runs_the_bot_under_the_operator_s_sandbox_and_limits(game, tmp_path):
    record, marker = crafted(game, tmp_path)
    err = tmp_path / "err"
    probe = shlex.join([sys.executable, str(PROBE), str(marker)])
    res = referee("ask", record, 3, "--bot", probe, "--stderr-dir", err)
    assert res.returncode in (0, 1), res.stdout + res.stderr
    assert_contained(probes(err), marker)


def test_a_memory_flag_sets_the_cap_and_the_record_cannot_lift_it(game, tmp_path):
    record, marker = crafted(game, tmp_path)
    err = tmp_path / "err"
    probe = shlex.join([sys.executable, str(PROBE), str(marker)])
    res = referee("ask", record, 3, "--bot", probe, "--stderr-dir", err, "--memory-mb", 512)
    assert res.returncode in (0, 1), res.stdout + res.stderr
    (line,) = probes(err)
    assert f"as={512 << 20} " in line, line


@pytest.mark.parametrize("limits,fragment", [
    ({"decision_s": "1"}, "decision_s"),
    ({"decision_s": float("nan")}, "decision_s"),
    ({"handshake_s": 1e300}, "handshake_s"),
    ({"time_bank_s": -1}, "time_bank_s"),
])
def test_recorded_time_limits_out_of_range_are_one_line(game, tmp_path, limits, fragment):
    lines = game.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header["limits"] = {**header["limits"], **limits}
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
    for args in (["ask", bad, 1, "--bot", RANDOM], ["replay", bad, "--request", 1]):
        res = referee(*args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert res.stderr.startswith("referee: error: ") and len(res.stderr.splitlines()) == 1, res.stderr
        assert fragment in res.stderr
