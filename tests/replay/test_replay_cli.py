"""`referee replay` picking part of a game, and records of another rules version: real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import PATIENT_FLAGS, built_once

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


def referee(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """One record of each, played once per test run (the tests only read them, or a copy)."""
    games = (("pegs-and-jokers", ["--option", "max_turns=400"]), ("back-alley", []))

    def build(folder):
        for game, extra in games:
            res = referee("play", game, "--bot", BOT + " 1", "--bot", BOT + " 2", "--seed", 5, "--record",
                          folder / f"{game}.jsonl", "--quiet", *PATIENT_FLAGS, *extra)
            assert res.returncode == 0, res.stderr

    folder = built_once(tmp_path_factory, "replay-cli-records", build)
    return {game: folder / f"{game}.jsonl" for game, _ in games}


def one_line_error(res, *needles):
    assert res.returncode == 2 and res.stdout == "", (res.returncode, res.stdout)
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr, res.stderr
    for needle in needles:
        assert needle in res.stderr, res.stderr


def test_turns_a_b_shows_those_turns_and_turn_n_one(records):
    res = referee("replay", records["pegs-and-jokers"], "--turns", "100-120")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    turns = [ln.split(":")[0] for ln in lines if ln.startswith("turn ")]
    assert turns == [f"turn {n}" for n in range(100, 121)]
    assert "board before turn 100:" in lines and "board after turn 120:" in lines
    assert "Score table" not in res.stdout
    one = referee("replay", records["pegs-and-jokers"], "--turn", 7)
    assert [ln for ln in one.stdout.splitlines() if ln.startswith("turn ")] == [
        ln for ln in referee("replay", records["pegs-and-jokers"]).stdout.splitlines() if ln.startswith("turn 7:")]


def test_board_every_k_draws_whole_boards(records):
    res = referee("replay", records["pegs-and-jokers"], "--board-every", 50)
    assert res.returncode == 0, res.stderr
    heads = [ln for ln in res.stdout.splitlines() if ln.startswith("board after turn ")]
    assert heads and all(int(h.split()[3].rstrip(":")) % 50 == 0 for h in heads)
    default = referee("replay", records["pegs-and-jokers"]).stdout.splitlines()
    assert not any(ln.startswith("board after turn ") for ln in default)


@pytest.mark.parametrize(("args", "needles"), [
    (["--deal", "1"], ["--deal", "Pegs and Jokers", "--turn N or --turns A-B"]),
    (["--turns", "9-3"], ["--turns 9-3", "A ≤ B"]),
    (["--turns", "x"], ["--turns 'x'", "A-B"]),
    (["--turns", "3"], ["--turns '3'"]),
    (["--turn", "0"], ["--turn 0"]),
    (["--turn", "3", "--turns", "1-4"], ["--turn and --turns"]),
    (["--board-every", "0"], ["--board-every 0"]),
])
def test_bad_turn_options_for_pegs_and_jokers_are_one_line_errors(records, args, needles):
    one_line_error(referee("replay", records["pegs-and-jokers"], *args), *needles)


@pytest.mark.parametrize("args", [["--turn", "3"], ["--turns", "1-2"], ["--board-every", "5"]])
def test_turn_options_for_a_card_game_are_refused(records, args):
    one_line_error(referee("replay", records["back-alley"], *args), args[0], "use --deal K")


def test_a_record_of_rules_version_1_is_refused_with_one_line_naming_the_version(records, tmp_path):
    lines = records["back-alley"].read_text().splitlines()
    header = json.loads(lines[0])
    assert header["rules_version"] == "2"
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join([json.dumps({**header, "rules_version": "1"}), *lines[1:]]) + "\n")
    one_line_error(referee("replay", old), str(old), "rules version '1'", "reads version '2'")
    res = referee("replay", old, "--verify")
    assert res.returncode == 1 and "DIVERGENCE: record uses rules version '1', this referee has '2'" in res.stdout
    assert referee("replay", records["back-alley"]).returncode == 0


def test_another_seats_fault_hides_its_legal_list_output_and_stderr():
    """``--seat S`` shows another seat's fault by its reason only: its legal list names cards of
    its hand, and its output and stderr are its own (as in the HTML replay's seat view)."""
    from referee.match.record import FaultLine
    from referee.replay import entries_for_seat

    fault = FaultLine(seat=2, reason="illegal_action", message="'pass' is not among the 2 legal actions",
                      stderr_tail=["secret"], request=9, legal=["KH", "5H"], output='{"action": "pass"}',
                      output_bytes=18, deal=1)
    (own,) = entries_for_seat([fault], 2)
    (other,) = entries_for_seat([fault], 1)
    assert own == fault
    assert (other.legal, other.output, other.output_bytes, other.stderr_tail) == (None, None, None, [])
    assert (other.reason, other.message, other.request, other.deal) == (fault.reason, fault.message, 9, 1)
