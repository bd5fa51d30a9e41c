"""`referee deals GAME -n N --seed S [-o FILE]` as a user runs it (referee_cli/deals.py).
A tournament playing such a file is in tests/tournaments/test_deals.py."""

from __future__ import annotations

import pytest

from tests.tournaments.test_cli_run import assert_user_error, referee
from tournaments.config import read_deals


def test_the_deals_command_writes_the_same_file_for_the_same_seed(tmp_path):
    first = referee("deals", "schmier", "-n", "5", "--seed", "9", "-o", tmp_path / "d1.txt")
    again = referee("deals", "schmier", "-n", "5", "--seed", "9")
    other = referee("deals", "schmier", "-n", "5", "--seed", "10")
    assert first.returncode == again.returncode == other.returncode == 0, first.stderr
    text = (tmp_path / "d1.txt").read_text()
    assert text == again.stdout and text != other.stdout
    assert text.startswith("# schmier deal seeds: referee deals schmier -n 5 --seed 9\n")
    seeds = read_deals(tmp_path / "d1.txt")
    assert len(seeds) == 5 == len(set(seeds)) and all(0 <= s < 2**63 for s in seeds)
    assert "5 deal seeds written to" in first.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (("deals", "chess", "-n", "3"), "unknown game 'chess'"),
    (("deals", "back-alley", "-n", "0"), "-n"),
    (("deals", "back-alley", "-n", "x"), "Invalid value for '--count' / '-n'"),
])
def test_bad_deals_arguments_are_one_line_errors(args, fragment):
    assert_user_error(referee(*args), fragment)


def test_an_unwritable_deals_file_is_one_line_and_exit_74(tmp_path):
    res = referee("deals", "back-alley", "-n", "2", "-o", tmp_path / "missing" / "d.txt")
    assert res.returncode == 74 and res.stderr.count("\n") == 1 and "missing/d.txt" in res.stderr
