"""From a fault to the decision, as a user goes: real processes throughout.

The fault line of `referee play` and `referee run` names the request and the
command that prints it; the record keeps the refused request's id, legal list and
the offending output; `referee ask` re-asks that decision to another bot, and
`--from` plays on from it into a record that verifies.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match.record import FaultLine, read_record
from tournaments.results import GameResult, parse_results

from ..conftest import PATIENT_FLAGS, built_once

ROOT = Path(__file__).resolve().parents[2]
LOGGER = ROOT / "tests" / "replay" / "logging_bot.py"
MISBEHAVING = ROOT / "sample_bots" / "misbehaving"
RANDOM = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
EXIT_FORFEIT = 3


def referee(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def logger(*extra: str) -> str:
    return shlex.join([sys.executable, str(LOGGER), "3", *extra])


def misbehaving(name: str, *extra: str) -> str:
    return shlex.join([sys.executable, str(MISBEHAVING / f"{name}.py"), *extra])


def play(tmp_path: Path, team1: str, *extra) -> tuple[subprocess.CompletedProcess, Path]:
    record = tmp_path / "game.jsonl"
    res = referee("play", "back-alley", "--bot", RANDOM + " 1", "--bot", team1, "--seed", 11, "--record", record,
                  # 10 s a decision: the faults here are the misbehaving bot's, never a stalled random
                  # bot's timeout (ask --from plays on at the record's limits, so this reaches it too);
                  # --force: a test may play again over its game.
                  *PATIENT_FLAGS, "--force", *extra)
    return res, record


def fault_of(record: Path) -> FaultLine:
    faults = [e for e in read_record(record).entries if isinstance(e, FaultLine)]
    assert len(faults) == 1
    return faults[0]


def replay_command(text: str) -> list[str]:
    """The command after `replay: ` in a fault line, as argv."""
    found = re.search(r"replay: (referee replay .*)$", text, re.M)
    assert found, text
    return shlex.split(found[1])


# -- play: the fault line, the record, the exit status --------------------------------------------


def test_a_game_played_to_its_end_exits_0(tmp_path):
    res, _ = play(tmp_path, RANDOM + " 2", "-q")
    assert res.returncode == 0, res.stderr
    assert "fault:" not in res.stdout


@pytest.mark.parametrize("team1,reason,output", [
    (logger("--reply", "illegal", "--after", "4"), "illegal_action", '"action": "'),
    (logger("--reply", "invalid", "--after", "4"), "invalid_action", '"action": "no-such-action"'),
    (misbehaving("invalid_json"), "invalid_json", ", oops"),
    (misbehaving("partial_line"), "partial_line", '{"type": "action", "id'),
    (logger("--reply", "partial", "--after", "4"), "partial_line", '"action": "'),
], ids=["illegal", "invalid", "invalid_json", "partial_exit", "partial_wait"])
def test_a_forfeit_exits_3_with_a_fault_line_whose_command_prints_the_refused_request(
        tmp_path, team1, reason, output):
    res, record = play(tmp_path, team1)
    assert res.returncode == EXIT_FORFEIT, res.stderr
    fault = fault_of(record)
    assert fault.reason == reason and fault.seat in (1, 3)
    # The record keeps the request, its legal list and the offending output.
    accepted = [e for e in read_record(record).entries if hasattr(e, "action")]
    assert fault.request == len(accepted) + 1 and fault.legal and fault.deal == 1
    assert fault.output is not None and output in fault.output and "\n" not in fault.output
    assert fault.output_bytes >= len(fault.output.encode())
    line = next(x for x in res.stdout.splitlines() if x.startswith("fault: "))
    assert (f"fault: back-alley, seat {fault.seat} (logging_bot)" in line or f"seat {fault.seat} (" in line)
    assert f"deal 1, request {fault.request}: {reason}: " in line and f"record {record}" in line
    argv = replay_command(line)
    assert argv == ["referee", "replay", str(record), "--request", str(fault.request)]
    shown = referee(*argv[1:])
    assert shown.returncode == 0, shown.stderr
    request = json.loads(shown.stdout)
    assert request["id"] == fault.request and request["seat"] == fault.seat and request["legal"] == fault.legal
    # The text replay's fault block says the same: where, the request, what it wrote, the command.
    text = referee("replay", record)
    assert text.returncode == 0, text.stderr
    block = text.stdout[text.stdout.index(f"Fault: seat {fault.seat} — {reason}: "):]
    assert f"\n  at deal 1, request {fault.request} (legal: {fault.legal[0]} " in block
    assert f"\n  it wrote ({fault.output_bytes} bytes): {fault.output}\n" in block
    assert f"\n  the request: {shlex.join(argv)}\n" in block


def test_invalid_json_shows_the_first_bytes_of_the_line(tmp_path):
    res, record = play(tmp_path, misbehaving("invalid_json"))
    assert res.returncode == EXIT_FORFEIT
    assert "the line begins '{\"type\": \"action\", \"id\": " in fault_of(record).message


def test_the_output_kept_is_escaped_and_capped_at_2_kb(tmp_path):
    res, record = play(tmp_path, misbehaving("huge_line"), "--max-line-bytes", 4096)
    assert res.returncode == EXIT_FORFEIT
    assert fault_of(record).reason == "line_too_long" and fault_of(record).output is None  # never kept
    # A long line that is refused for its content is kept up to 2 KB.
    bot = tmp_path / "long.py"
    bot.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'hello': print(json.dumps({'type': 'ready', 'name': 'x', 'events': False}), flush=True)\n"
        "    elif m['type'] == 'request':\n"
        "        sys.stdout.write('\\x1b[31m' + 'y' * 3000 + '\\n'); sys.stdout.flush()\n")
    res, record = play(tmp_path, f"{sys.executable} {bot}", "--sandbox", "off")
    assert res.returncode == EXIT_FORFEIT
    fault = fault_of(record)
    assert fault.reason == "invalid_json" and fault.output_bytes == 3005
    assert fault.output.startswith("\\x1b[31myyy") and len(fault.output) == 2048 - 1 + 4


# -- ask ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def faulted(tmp_path_factory):
    """A record whose seat 1 forfeited with an illegal action at its fifth request, played once per
    test run (the tests only read it: ``ask`` writes nothing, ``--from`` into the test's own folder)."""
    def build(folder):
        res, _ = play(folder, logger("--reply", "illegal", "--after", "4"))
        assert res.returncode == EXIT_FORFEIT, res.stderr

    record = built_once(tmp_path_factory, "debugging-faulted", build) / "game.jsonl"
    return record, fault_of(record)


def test_ask_a_bot_that_answers_legally(faulted):
    record, fault = faulted
    res = referee("ask", record, fault.request, "--bot", logger("--reply", "last"))
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert f"request {fault.request} (back-alley, seat {fault.seat}, deal 1, " in out
    assert "fed its 4 earlier requests (replies ignored, recorded actions applied)" in out
    assert f'reply: {{"type": "action", "id": {fault.request}, "action": "{fault.legal[-1]}"}}' in out
    assert "verdict: legal" in out
    assert "recorded: logger forfeited: illegal_action: " in out and "its output: " in out


@pytest.mark.parametrize("reply,reason", [("illegal", "illegal_action"), ("invalid", "invalid_action")])
def test_ask_a_bot_that_answers_wrong_exits_1_with_the_reason(faulted, reply, reason):
    record, fault = faulted
    res = referee("ask", record, fault.request, "--bot", logger("--reply", reply, "--after", "4"))
    assert res.returncode == 1, res.stderr
    assert f"verdict: refused: {reason}: " in res.stdout
    # The recorded bot's own program, fed the same lines, made the same earlier choices.
    assert "fed its 4 earlier requests" in res.stdout and "every reply matched the recorded action" in res.stdout


def test_ask_an_earlier_decision_shows_what_the_recorded_bot_played(faulted):
    record, fault = faulted
    recorded = read_record(record)
    first = next(e for e in recorded.entries if getattr(e, "seat", None) == fault.seat and hasattr(e, "action"))
    res = referee("ask", record, first.n, "--bot", logger("--reply", "last"))
    assert res.returncode == 0, res.stderr
    assert f"recorded: logger played {first.action!r}" in res.stdout


def test_play_on_from_a_decision_writes_a_record_that_verifies(faulted, tmp_path):
    record, fault = faulted
    new = tmp_path / "whatif.jsonl"
    res = referee("ask", record, fault.request, "--from", "--record", new,
                  "--bot", RANDOM + " 1", "--bot", logger("--reply", "last"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"referee replay {new} --verify" in res.stdout
    check = referee("replay", new, "--verify")
    assert check.returncode == 0 and check.stdout.startswith("OK: "), check.stdout
    old, again = read_record(record), read_record(new)
    before = [(e.n, e.seat, e.action) for e in old.entries if hasattr(e, "action")]
    after = [(e.n, e.seat, e.action) for e in again.entries if hasattr(e, "action")]
    assert after[: len(before)] == before  # the recorded decisions, then the bots'
    assert after[len(before)] == (fault.request, fault.seat, fault.legal[-1])
    assert again.result.outcome.status == "win"


@pytest.mark.parametrize("args,fragment", [
    (["0", "--bot", RANDOM], "request 0: "),
    (["99999", "--bot", RANDOM], "request 99999: "),
    (["1"], "give --bot once"),
    (["1", "--bot", RANDOM, "--bot", RANDOM], "give --bot once"),
    (["1", "--from"], "--from needs --record NEW"),
    (["1", "--bot", RANDOM, "--record", "x.jsonl"], "--record goes with --from"),
    (["1", "--bot", "no-such-program-here"], "not found"),
    (["99999", "--from", "--record", "{tmp}/n.jsonl", "--bot", RANDOM, "--bot", RANDOM],
     "request 99999: the bots can take over at requests 1 … "),
    (["1", "--from", "--record", "{tmp}/n.jsonl"], "or --bots-from-record to run the commands the record names"),
    (["1", "--bot", RANDOM, "--bots-from-record"], "--bots-from-record goes with --from and without --bot"),
    (["1", "--from", "--record", "{tmp}/n.jsonl", "--bot", RANDOM, "--bots-from-record"],
     "--bots-from-record goes with --from and without --bot"),
    (["1", "--bot", RANDOM, "--memory-mb", "-1"], "--memory-mb must be 0 or more"),
])
def test_bad_ask_input_is_one_line_and_status_2(faulted, tmp_path, args, fragment):
    record, _ = faulted
    res = referee("ask", record, *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert res.returncode == 2, res.stdout + res.stderr
    assert fragment in res.stderr and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_ask_on_something_that_is_not_a_record_is_status_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    res = referee("ask", bad, "1", "--bot", RANDOM)
    assert res.returncode == 2 and "not a match record" in res.stderr and len(res.stderr.splitlines()) == 1


def test_ask_on_a_record_without_requests_is_status_2(tmp_path):
    res, record = play(tmp_path, misbehaving("exit_at_once"))
    assert res.returncode == EXIT_FORFEIT
    assert "no request pending" in res.stdout and f"replay: referee replay {record}\n" in res.stdout + "\n"
    asked = referee("ask", record, "1", "--bot", RANDOM)
    assert asked.returncode == 2 and "no request in this record" in asked.stderr
    shown = referee("replay", record, "--request", "1")
    assert shown.returncode == 2 and "no request in this record" in shown.stderr


# -- run: live fault lines and the end-of-run summary ------------------------------------------------


def test_run_names_every_fault_live_and_in_a_summary_with_a_working_command(tmp_path):
    out = tmp_path / "out"
    res = referee("run", "--game", "back-alley", "--entrant", f"rnd={RANDOM}",
                  "--entrant", f"bad={logger('--reply', 'illegal', '--after', '3')}", "-n", "1",
                  "--output", out, "-q", "--jobs", "1", timeout=300)
    assert res.returncode == 0, res.stderr
    live = [x for x in res.stderr.splitlines() if x.startswith("fault: back-alley game ")]
    assert len(live) == 2 and all("(bad)" in x and ": illegal_action: " in x for x in live)
    summary = res.stderr.split("2 games ended by a forfeit:\n")[1].splitlines()[:2]
    assert sorted(x.strip() for x in summary) == sorted(live)
    results = parse_results((out / "results.jsonl").read_bytes()).results
    for line in live:
        game_id = int(line.split("game ")[1].split(",")[0])
        fault = results[game_id].fault
        assert fault is not None and fault.request is not None and fault.deal == 1
        assert f"request {fault.request}: " in line and str(out / results[game_id].record) in line
        shown = referee(*replay_command(line)[1:])
        assert shown.returncode == 0 and json.loads(shown.stdout)["id"] == fault.request


def test_results_lines_without_the_fault_position_still_load():
    old = {"v": 2, "game_id": 3, "pairing": ["a", "b"], "deal": 0, "arrangement": 1, "teams": ["a", "b"],
           "seed": 9, "status": "forfeit", "winners": [0], "scores": [0, 0], "reason": "timeout",
           "fault": {"seat": 1, "team": 1, "entrant": "b", "reason": "timeout", "message": "slow"},
           "decisions": 4, "duration_s": 0.1, "record": "records/000003.jsonl", "record_sha256": None,
           "sandbox": "off"}
    result = GameResult.from_json(old)
    assert result.fault is not None and result.fault.request is None and result.fault.deal is None
    assert result.to_json() == old  # written back unchanged: its MAC still holds
