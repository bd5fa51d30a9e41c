"""`referee play` and `referee replay` as a user runs them: real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def referee(*args, cwd=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def ba_record(tmp_path_factory):
    path = tmp_path_factory.mktemp("rec") / "ba.jsonl"
    res = referee("play", "back-alley", "--bot", BOT + " 1", "--bot", BOT + " 2", "--seed", 7, "--record", path)
    assert res.returncode == 0, res.stderr
    return path, res


def test_play_prints_a_deal_by_deal_table_and_the_result(ba_record):
    path, res = ba_record
    out = res.stdout
    # The header of each column, its lines put together (a narrow table heads "T0" over "total").
    header_lines = [[c.strip() for c in line.strip("┃").split("┃")] for line in out.splitlines()
                    if line.startswith("┃")]
    headers = [" ".join(filter(None, parts)) for parts in zip(*header_lines, strict=True)]
    assert "deal" in headers and "T0 total" in headers, headers
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 25
    assert "Result:" in out and str(path) in out
    assert res.stderr == ""  # diagnostics only at warning level, none expected


def test_play_writes_each_bots_stderr_to_its_own_file(ba_record):
    path, _ = ba_record
    folder = path.with_name("ba.stderr")
    assert sorted(p.name for p in folder.iterdir()) == [f"seat{s}-random_bot.log" for s in range(4)]


def test_replay_shows_hands_bids_and_tricks(ba_record):
    path, _ = ba_record
    res = referee("replay", path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("Deal ") >= 25
    assert "trick 1:" in res.stdout and "hand 3:" in res.stdout
    assert "Result:" in res.stdout


def test_replay_of_one_deal_shows_only_that_deal(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--deal", 13)
    assert res.returncode == 0, res.stderr
    assert "Deal 13" in res.stdout and "Deal 12 " not in res.stdout and "Deal 14" not in res.stdout


def test_replay_for_one_seat_hides_the_other_hands(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--seat", 1)
    assert res.returncode == 0, res.stderr
    assert "hand 1:" in res.stdout
    for other in (0, 2, 3):
        assert f"hand {other}:" not in res.stdout


def test_replay_verify_accepts_a_true_record(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--verify")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("OK: verified")


def test_replay_verify_reports_the_first_divergence(ba_record, tmp_path):
    path, _ = ba_record
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        entry = json.loads(line)
        if entry["record"] == "decision" and entry["decision"] == "play" and len(entry["legal"]) > 1:
            entry["action"] = next(a for a in entry["legal"] if a != entry["action"])
            lines[i] = json.dumps(entry)
            break
    bad = tmp_path / "tampered.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    res = referee("replay", bad, "--verify")
    assert res.returncode == 1
    assert res.stdout.startswith("DIVERGENCE:") and "line" in res.stdout


def test_a_truncated_record_replays_up_to_its_last_complete_line(ba_record, tmp_path):
    path, _ = ba_record
    raw = path.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(raw[: len(raw) // 2])  # almost surely mid-line
    res = referee("replay", cut)
    assert res.returncode == 0, res.stderr
    assert "truncated" in res.stdout and "Traceback" not in res.stderr
    res = referee("replay", cut, "--verify")
    assert res.returncode == 1 and "truncated" in res.stdout


def test_a_corrupt_line_is_reported_with_its_number(ba_record, tmp_path):
    path, _ = ba_record
    lines = path.read_text().splitlines()
    lines[40] = "{garbage"
    bad = tmp_path / "corrupt.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    res = referee("replay", bad)
    assert res.returncode == 0
    assert "corrupt at line 41" in res.stdout


@pytest.mark.parametrize(
    "args,needle",
    [
        (["play", "chess", "--bot", BOT, "--bot", BOT], "unknown game 'chess'"),
        (["play", "back-alley", "--bot", "no-such-program-xyz", "--bot", BOT], "not found on PATH"),
        (["play", "back-alley", "--bot", "./pyproject.toml", "--bot", BOT], "not an executable"),
        (["play", "back-alley", "--bot", f"{sys.executable} missing_bot.py", "--bot", BOT], "does not exist"),
        (["play", "back-alley", "--bot", BOT], "give --bot 2 times"),
        (["play", "back-alley", "--bot", BOT, "--bot", BOT, "--record", "/proc/nope/x.jsonl"], "cannot write record"),
        (["play", "pegs-and-jokers", "--players", "5", "--bot", BOT, "--bot", BOT], "players"),
        (["play", "back-alley", "--bot", BOT, "--bot", BOT, "--option", "max_redeals=-1"], "max_redeals"),
        (["replay", "pyproject.toml"], "not a match record"),
        (["replay", "no/such/file.jsonl"], "no such file"),
        (["replay", "tests"], "directory"),
        (["play", "back-alley", "--bot", BOT, "--bot", BOT, "--seed", "abc"], "seed"),
    ],
)
def test_user_errors_get_one_line_and_a_nonzero_exit(args, needle, tmp_path):
    res = referee(*args)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert needle in lines[0], lines[0]


def test_an_empty_file_is_not_a_record(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    res = referee("replay", empty)
    assert res.returncode == 2 and "empty file" in res.stderr


def test_replay_seat_out_of_range_is_a_user_error(ba_record):
    path, _ = ba_record
    res = referee("replay", path, "--seat", 9)
    assert res.returncode == 2 and "seats 0" in res.stderr
