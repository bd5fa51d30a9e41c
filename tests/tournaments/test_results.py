"""results.jsonl lines and reading them back after a crash (results.py)."""

from __future__ import annotations

from tournaments.results import GameFault, GameResult, parse_results

from .helpers import result


def test_a_result_line_round_trips():
    r = result(3, ("b", "a"), (0, 0), winners=(1,), fault=GameFault(0, 0, "b", "timeout", "slow"))
    line = r.to_line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert parse_results(line).results == {3: r}


def test_a_torn_last_line_is_dropped_and_the_good_prefix_measured():
    good = result(0, ("a", "b"), (1, 2)).to_line() + result(1, ("b", "a"), (3, 4)).to_line()
    torn = result(2, ("a", "b"), (5, 6)).to_line()[:-7]
    parsed = parse_results(good + torn)
    assert sorted(parsed.results) == [0, 1]
    assert parsed.good_bytes == len(good) and parsed.dropped == 1


def test_an_unterminated_but_complete_json_line_is_still_dropped():
    # Without its newline we cannot know the write finished.
    line = result(0, ("a", "b"), (1, 2)).to_line()
    parsed = parse_results(line[:-1])
    assert parsed.results == {} and parsed.good_bytes == 0 and parsed.dropped == 1


def test_duplicate_lines_keep_the_first():
    first = result(0, ("a", "b"), (1, 2))
    second = result(0, ("a", "b"), (9, 2))
    parsed = parse_results(first.to_line() + second.to_line())
    assert parsed.results[0] == first and parsed.dropped == 0


def test_an_empty_file_has_no_results():
    assert parse_results(b"") == parse_results(b"")
    assert parse_results(b"").results == {} and parse_results(b"").dropped == 0


def test_from_json_accepts_what_to_json_wrote():
    r = result(5, ("x", "y", "z"), (21, 3, 4))
    assert GameResult.from_json(r.to_json()) == r
