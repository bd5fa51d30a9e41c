"""`-q`/`--quiet` on every command that prints: the result line or the essential output only.

play: the result line (and the fault line of a forfeit); replay: the result line (--verify
its verdict, --html nothing); ask: the verdict line (--from: the result line); deals and
report: nothing but the data they write; worker: no versions line and Dask's log at warning
level; run: plain progress lines instead of the live display, then the standings.
Each is compared with the same command without -q, so a -q that drops nothing fails.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import PATIENT_FLAGS, built_once

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
PEGS = ("pegs-and-jokers", "--players", 4)


def referee(*args, cwd=None, timeout=180, env=None):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=timeout, env=env)


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A finished Pegs and Jokers game, played with -q once per test run (the tests only read it)."""
    def build(folder):
        res = referee("play", *PEGS, "--bot", BOT + " {seed}", "--bot", BOT + " {seed}", "--seed", 2, "--record",
                      folder / "g.jsonl", "-q")
        assert res.returncode == 0, res.stderr
        (folder / "res.json").write_text(json.dumps([res.stdout, res.stderr]))

    folder = built_once(tmp_path_factory, "quiet-game", build)
    stdout, stderr = json.loads((folder / "res.json").read_text())
    return folder / "g.jsonl", subprocess.CompletedProcess([], 0, stdout, stderr)


def test_play_quiet_prints_the_result_line_only(game, tmp_path):
    _, quiet = game
    assert len(lines(quiet.stdout)) == 1 and quiet.stdout.startswith("Result: team "), quiet.stdout
    loud = referee("play", *PEGS, "--bot", BOT + " {seed}", "--bot", BOT + " {seed}", "--seed", 2,
                   "--record", tmp_path / "g.jsonl")
    assert loud.returncode == 0
    assert quiet.stdout.splitlines()[0] in loud.stdout.splitlines() and len(lines(loud.stdout)) > 1


def test_play_quiet_after_a_forfeit_prints_the_result_and_the_fault_line(tmp_path):
    res = referee("play", *PEGS, "--bot", BOT, "--bot", "false", "--record", tmp_path / "f.jsonl", "-q")
    assert res.returncode == 3
    shown = lines(res.stdout)
    assert len(shown) == 2 and shown[0].startswith("Result: forfeit: seat 1") and shown[1].startswith("fault: ")


def test_replay_quiet_prints_the_result_line_only(game, tmp_path):
    path, _ = game
    loud = referee("replay", path)
    quiet = referee("replay", path, "-q")
    assert quiet.returncode == loud.returncode == 0
    assert lines(quiet.stdout) == [line for line in lines(loud.stdout) if line.startswith("Result: ")]
    assert lines(quiet.stdout)[0].startswith("Result: win (")
    for args in (("--summary",), ("--turn", 3), ("--seat", 1)):
        assert referee("replay", path, "-q", *args).stdout == quiet.stdout
    verified = referee("replay", path, "--verify", "-q")
    assert verified.returncode == 0 and lines(verified.stdout) == lines(referee("replay", path, "--verify").stdout)
    page = tmp_path / "r.html"
    assert referee("replay", path, "--html", page).stdout.startswith("Wrote ")
    html = referee("replay", path, "--html", page, "--quiet")
    assert html.returncode == 0 and html.stdout == "" and html.stderr == "" and page.stat().st_size > 1000


def test_replay_quiet_of_a_truncated_record_says_so(game, tmp_path):
    path, _ = game
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    res = referee("replay", cut, "-q")
    assert res.returncode == 0
    assert [line.split(" ")[0] for line in lines(res.stdout)] == ["note:"] and "truncated" in res.stdout


def test_ask_quiet_prints_the_verdict_line_only(game):
    path, _ = game
    n = next(e["n"] for e in map(json.loads, path.read_text().splitlines()) if e["record"] == "decision")
    loud = referee("ask", path, n, "--bot", BOT + " {seed}")  # seeded: the same reply both times
    quiet = referee("ask", path, n, "--bot", BOT + " {seed}", "-q")
    assert quiet.returncode == loud.returncode == 0, quiet.stderr
    assert lines(quiet.stdout) == [line for line in lines(loud.stdout) if line.startswith("verdict: ")]
    assert quiet.stdout.startswith("verdict: legal: ")
    refused = referee("ask", path, n, "--bot", "false", "-q")
    assert refused.returncode == 1
    assert len(lines(refused.stdout)) == 1 and refused.stdout.startswith("verdict: refused: exited: "), refused.stdout


def test_ask_from_quiet_prints_the_result_line_only(game, tmp_path):
    path, _ = game
    bots = ("--bot", f"{BOT} {{seed}}") * 2  # a record is data: the bots that play on (one per team) are named
    loud = referee("ask", path, 5, "--from", "--record", tmp_path / "a.jsonl", *bots)
    quiet = referee("ask", path, 5, "--from", "--record", tmp_path / "b.jsonl", "-q", *bots)
    assert quiet.returncode == loud.returncode == 0, quiet.stderr
    assert len(lines(quiet.stdout)) == 1 and quiet.stdout.startswith("Result: ")
    assert quiet.stdout.splitlines()[0] in loud.stdout.splitlines() and len(lines(loud.stdout)) > 1


def test_deals_quiet_writes_the_file_and_says_nothing(tmp_path):
    loud = referee("deals", "schmier", "-n", 3, "--seed", 1, "-o", tmp_path / "a.txt")
    quiet = referee("deals", "schmier", "-n", 3, "--seed", 1, "-o", tmp_path / "b.txt", "-q")
    assert loud.stderr == f"3 deal seeds written to {tmp_path / 'a.txt'}\n"
    assert quiet.returncode == 0 and quiet.stdout == quiet.stderr == ""
    assert (tmp_path / "b.txt").read_text() == (tmp_path / "a.txt").read_text()
    to_stdout = referee("deals", "schmier", "-n", 3, "--seed", 1, "-q")  # the data itself is not quieted
    assert to_stdout.stdout == (tmp_path / "a.txt").read_text()


@pytest.fixture(scope="module")
def tournament(tmp_path_factory):
    """Run once per test run: the tests read it (``report``, which may write replay pages into
    its records folder, is given a copy)."""
    def build(folder):
        res = referee("run", "--game", *PEGS, "--entrant", f"a={BOT} {{seed}}", "--entrant", f"b={BOT} {{seed}}",
                      "-n", 1, "--seed", 3, "--output", folder / "out", "-q",
                      *PATIENT_FLAGS)  # a test of what is printed, not of time: no timeout forfeits
        assert res.returncode == 0, res.stderr
        (folder / "res.json").write_text(json.dumps([res.stdout, res.stderr]))

    folder = built_once(tmp_path_factory, "quiet-tournament", build)
    stdout, stderr = json.loads((folder / "res.json").read_text())
    return folder / "out", subprocess.CompletedProcess([], 0, stdout, stderr)


def test_run_quiet_prints_one_summary_line_and_no_tables(tournament):
    out, res = tournament
    # The line names the leader, or the entrants tied first in the standings' own order
    # (which of a tie goes first follows the ratings, so it depends on the deals).
    standings = json.loads((out / "standings.json").read_text())["entrants"]
    first = [e for e in standings if e["rank"] == standings[0]["rank"]]
    if len(first) == 1:
        e = first[0]
        assert lines(res.stdout)[0].startswith(
            f"pegs-and-jokers: 2 games; leader {e['name']} {e['wins']}-{e['draws']}-{e['losses']}, Elo "), res.stdout
    else:
        assert lines(res.stdout)[0] == f"pegs-and-jokers: 2 games; tied first: {', '.join(e['name'] for e in first)}"\
            "; 0 forfeits", res.stdout
    assert len(lines(res.stdout)) == 1 and lines(res.stdout)[0].endswith("; 0 forfeits"), res.stdout
    assert "Standings" not in res.stdout + res.stderr and "games 2/2" not in res.stderr  # no tables, no progress
    assert f"output: {out} (standings.json" in res.stderr
    assert "\x1b[" not in res.stderr  # no live display's control sequences


def test_report_quiet_writes_the_page_and_says_nothing(tournament, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(tournament[0], out)  # report makes any missing replay page in the folder: not in the shared one
    loud = referee("report", out, "--html", tmp_path / "a.html")
    quiet = referee("report", out, "--html", tmp_path / "b.html", "-q")
    assert loud.returncode == quiet.returncode == 0
    assert loud.stdout == f"report: {(tmp_path / 'a.html').resolve().as_uri()}\n"
    assert quiet.stdout == quiet.stderr == "" and (tmp_path / "b.html").stat().st_size > 1000


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def scheduler(tmp_path):
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{free_port()}"
    log = (tmp_path / "scheduler.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                             "--port", address.rsplit(":", 1)[1], "--no-dashboard"], stdout=log, stderr=log,
                            start_new_session=True)
    try:
        yield address
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def worker_log(address: str, *flags: str) -> str:
    """What `referee worker` writes until it has joined the scheduler."""
    import distributed

    proc = subprocess.Popen([sys.executable, "-m", "referee", "worker", address, "--no-dashboard", "--host",
                             "127.0.0.1", *flags], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        with distributed.Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=120)
            time.sleep(1)  # the lines it writes as it joins
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return out.decode()


@pytest.mark.slow
def test_worker_quiet_says_nothing_when_the_versions_match_and_logs_warnings_only(scheduler):
    loud = referee("worker", scheduler, "--check-only")
    quiet = referee("worker", scheduler, "--check-only", "-q")
    assert loud.returncode == quiet.returncode == 0, loud.stderr
    assert loud.stderr == f"referee worker: versions match the scheduler at {scheduler}\n"
    assert quiet.stdout == quiet.stderr == ""
    loud_log = worker_log(scheduler)
    assert "versions match" in loud_log and " - INFO - " in loud_log
    quiet_log = worker_log(scheduler, "-q")
    assert "versions match" not in quiet_log and " - INFO - " not in quiet_log, quiet_log
