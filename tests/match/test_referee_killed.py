"""The referee itself killed with SIGKILL mid-game: the record is a readable,
truncated prefix; well-behaved bots see the end of their stdin and exit; and a
resumed tournament plays the interrupted games again."""

from __future__ import annotations

import subprocess
import sys

from referee.match.record import read_record
from referee.match.verify import verify_record
from tournaments.results import parse_results

from .hostile import RANDOM_BOT, ROOT, assert_no_survivors, count_lines, kill_when, marked_processes

BOT = f"{sys.executable} {RANDOM_BOT}"


def referee_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "referee", *map(str, args)]


def test_a_record_cut_by_sigkill_replays_up_to_its_last_complete_line(tmp_path, monkeypatch):
    record = tmp_path / "game.jsonl"
    with marked_processes(monkeypatch) as token:
        proc = subprocess.Popen(referee_cmd("play", "back-alley", "--bot", BOT + " 1", "--bot", BOT + " 2",
                                            "--seed", 5, "--record", record, "-q"),
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kill_when(proc, lambda: count_lines(record) >= 300)
        assert_no_survivors(token, within_s=5)  # the bots saw EOF on stdin and left

    rec = read_record(record)
    assert rec.truncated and rec.result is None and rec.bad_line is None
    assert len(rec.entries) >= 299
    check = verify_record(rec)
    assert not check.ok and "truncated" in check.message and check.decisions > 0

    # A torn last line (the kill can land inside a write) is dropped, not an error.
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(record.read_bytes() + b'{"record":"decision","n":99')
    assert read_record(torn).entries == rec.entries and read_record(torn).truncated

    for path in (record, torn):
        shown = subprocess.run(referee_cmd("replay", path), capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert shown.returncode == 0, shown.stderr
        last = rec.line_numbers[-1]
        assert f"record is truncated: the game did not finish; shown up to line {last}" in shown.stdout
        verified = subprocess.run(referee_cmd("replay", path, "--verify"), capture_output=True, text=True,
                                  cwd=ROOT, timeout=60)
        assert verified.returncode == 1 and "record is truncated" in verified.stdout


TOML = """\
game = "back-alley"
seed = 4
games_per_pairing = 1
jobs = 2
[limits]
decision_s = 20.0
handshake_s = 60.0
[[entrants]]
name = "r1"
command = "{bot} {{seed}}"
[[entrants]]
name = "r2"
command = "{bot} {{seed}}"
[[entrants]]
name = "r3"
command = "{bot} {{seed}}"
"""


def test_a_resumed_tournament_plays_the_game_the_kill_interrupted(tmp_path, monkeypatch):
    toml = tmp_path / "t.toml"
    toml.write_text(TOML.format(bot=BOT))
    out = tmp_path / "out"

    def a_game_is_half_written() -> bool:
        records = out / "records"
        return any(count_lines(p) >= 50 for p in records.glob("*.jsonl")) if records.is_dir() else False

    with marked_processes(monkeypatch) as token:
        proc = subprocess.Popen(referee_cmd("run", toml, "--output", out, "-q"), cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        kill_when(proc, a_game_is_half_written)
        assert_no_survivors(token, within_s=5)
    results_file = out / "results.jsonl"
    finished = set(parse_results(results_file.read_bytes()).results) if results_file.exists() else set()
    interrupted = {int(p.stem) for p in (out / "records").glob("*.jsonl")} - finished
    assert interrupted, "a game was running at the kill"
    for game_id in interrupted:
        path = out / "records" / f"{game_id:06d}.jsonl"
        if path.stat().st_size == 0:
            continue  # killed between creating the file and writing its header: not started
        rec = read_record(path)
        assert rec.truncated and rec.result is None
    assert any(count_lines(out / "records" / f"{i:06d}.jsonl") >= 50 for i in interrupted)

    res = subprocess.run(referee_cmd("run", toml, "--output", out, "-q"), capture_output=True, text=True,
                         cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    results = parse_results((out / "results.jsonl").read_bytes())
    assert sorted(results.results) == list(range(6)) and results.dropped == 0
    for game_id in interrupted:  # played again from scratch: a whole record that verifies
        rec = read_record(out / "records" / f"{game_id:06d}.jsonl")
        assert not rec.truncated and rec.result is not None and verify_record(rec).ok
        assert results.results[game_id].status in ("win", "draw")
