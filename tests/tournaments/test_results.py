"""results.jsonl lines, their authenticators, and reading them back after a crash or a forgery (results.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tournaments.results import GameFault, GameResult, check_sequence, parse_results, result_mac

from .helpers import SECRET, result

OTHER = bytes(32)


def lines(*results: GameResult) -> bytes:
    return b"".join(r.to_line(SECRET) for r in results)


def test_a_result_line_round_trips():
    r = result(3, ("b", "a"), (0, 0), winners=(1,), fault=GameFault(0, 0, "b", "timeout", "slow"))
    line = r.to_line(SECRET)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    parsed = parse_results(line, secret=SECRET)
    assert parsed.results == {3: r} and parsed.rejected == []


def test_a_torn_last_line_is_dropped_and_the_good_prefix_measured():
    good = lines(result(0, ("a", "b"), (1, 2)), result(1, ("b", "a"), (3, 4)))
    torn = result(2, ("a", "b"), (5, 6)).to_line(SECRET)[:-7]
    parsed = parse_results(good + torn, secret=SECRET)
    assert sorted(parsed.results) == [0, 1] and parsed.rejected == []
    assert parsed.good_bytes == len(good) and parsed.dropped == 1


def test_an_unterminated_but_complete_json_line_is_still_dropped():
    # Without its newline we cannot know the write finished.
    line = result(0, ("a", "b"), (1, 2)).to_line(SECRET)
    parsed = parse_results(line[:-1], secret=SECRET)
    assert parsed.results == {} and parsed.good_bytes == 0 and parsed.dropped == 1 and parsed.lines == ()


def test_duplicate_lines_keep_the_first():
    first = result(0, ("a", "b"), (1, 2))
    second = result(0, ("a", "b"), (9, 2))
    parsed = parse_results(lines(first, second), secret=SECRET)
    assert parsed.results[0] == first and parsed.dropped == 0 and parsed.rejected == []


def test_an_empty_file_has_no_results():
    assert parse_results(b"") == parse_results(b"", secret=SECRET)
    assert parse_results(b"").results == {} and parse_results(b"").dropped == 0


def test_from_json_accepts_what_to_json_wrote():
    r = result(5, ("x", "y", "z"), (21, 3, 4))
    assert GameResult.from_json(r.to_json()) == r


def test_a_bad_line_in_the_middle_costs_only_itself():
    before, after = result(0, ("a", "b"), (1, 2)), result(2, ("b", "a"), (3, 4))
    for bad, problem in [
        (b'{"game_id": 1, "status": "wi\n', "not JSON"),
        (b"\xff\xfe garbage\n", "not JSON"),
        (b"\n", "not JSON"),
        (b"[1, 2]\n", "not a JSON object"),
    ]:
        data = before.to_line(SECRET) + bad + after.to_line(SECRET)
        parsed = parse_results(data, secret=SECRET)
        assert parsed.results == {0: before, 2: after}, bad
        assert [(x.number, x.raw, x.problem) for x in parsed.rejected] == [(2, bad, problem)]
        assert parsed.good_bytes == len(data) and parsed.dropped == 0


def forged(game_id: int, **changes) -> bytes:
    """A line as a bot could write it: valid JSON, plausible content, no valid MAC."""
    data = result(game_id, ("a", "b"), (99, 0)).to_json() | changes
    return (json.dumps(data) + "\n").encode()


def test_a_line_without_a_valid_mac_is_rejected_and_names_its_game():
    honest = result(0, ("a", "b"), (1, 2))
    bad_mac = json.loads(result(1, ("a", "b"), (99, 0)).to_line(OTHER))  # written with another secret
    data = honest.to_line(SECRET) + forged(1) + (json.dumps(bad_mac) + "\n").encode() + forged(1, mac="00" * 32)
    parsed = parse_results(data, secret=SECRET)
    assert parsed.results == {0: honest}
    assert [(x.number, x.claimed_game) for x in parsed.rejected] == [(2, 1), (3, 1), (4, 1)]
    assert parsed.rejected[0].problem == "no authenticator (mac)"
    assert all("authenticator does not match" in x.problem for x in parsed.rejected[1:])


@pytest.mark.parametrize("field", sorted(result(0, ("a", "b"), (1, 2)).to_json()))
def test_the_mac_covers_every_field(field):
    line = json.loads(result(7, ("a", "b"), (1, 2), fault=GameFault(1, 1, "b", "timeout", "slow")).to_line(SECRET))
    value = line[field]
    line[field] = [value] if not isinstance(value, list) else value[::-1] + ["x"]
    parsed = parse_results((json.dumps(line) + "\n").encode(), secret=SECRET)
    assert parsed.results == {} and "authenticator does not match" in parsed.rejected[0].problem


def test_key_order_and_spacing_do_not_matter_to_the_mac():
    line = json.loads(result(4, ("a", "b"), (1.5, 2)).to_line(SECRET))
    shuffled = json.dumps(dict(reversed(list(line.items()))), indent=1).replace("\n", " ") + "\n"
    assert sorted(parse_results(shuffled.encode(), secret=SECRET).results) == [4]


def test_a_valid_mac_on_a_malformed_result_is_still_rejected():
    content = {"v": 2, "game_id": 3}
    line = (json.dumps({**content, "mac": result_mac(SECRET, content)}) + "\n").encode()
    (bad,) = parse_results(line, secret=SECRET).rejected
    assert bad.claimed_game == 3 and bad.problem.startswith("not a result line (missing 'pairing')")


def test_without_a_secret_lines_are_read_but_not_authenticated():
    data = lines(result(0, ("a", "b"), (1, 2))) + forged(1)
    assert sorted(parse_results(data).results) == [0, 1]
    assert sorted(parse_results(data, secret=SECRET).results) == [0]


def numbered(*seqs, unnumbered: int = 0):
    out = [dataclasses.replace(result(i, ("a", "b"), (1, 2)), seq=s) for i, s in enumerate(seqs)]
    return out + [result(100 + i, ("a", "b"), (1, 2)) for i in range(unnumbered)]


def test_check_sequence_finds_the_numbers_missing_below_the_highest():
    assert check_sequence(numbered(1, 2, 3)).ok and check_sequence(numbered(1, 2, 3)).next_seq == 4
    gap = check_sequence(numbered(1, 2, 4, 6))
    assert (gap.missing, gap.lost, gap.next_seq) == ((3, 5), 2, 7) and not gap.ok
    assert gap.describe() == "2 authentic lines deleted (sequence numbers 3, 5 missing)"
    assert check_sequence([]).next_seq == 1


def test_check_sequence_counts_unnumbered_older_lines_as_the_lowest_numbers():
    mixed = check_sequence(numbered(4, 5, unnumbered=3))
    assert mixed.ok and mixed.next_seq == 6
    assert check_sequence(numbered(unnumbered=3)).next_seq == 4
    one_gone = check_sequence(numbered(4, 5, unnumbered=2))
    assert one_gone.lost == 1 and "1 authentic line deleted" in one_gone.describe()


def test_check_sequence_takes_a_rejected_lines_claim_but_never_beyond_the_authentic_numbers():
    assert check_sequence(numbered(1, 3), rejected=[2]).ok  # reported as rejected, not also as deleted
    huge = check_sequence(numbered(1, 2), rejected=[10**12])  # a forged number bounds nothing
    assert huge.ok and huge.next_seq == 3


def test_seq_is_inside_the_mac_and_read_back():
    line = result(0, ("a", "b"), (1, 2)).to_line(SECRET, 5)
    assert parse_results(line, secret=SECRET).lines[0].result.seq == 5
    altered = line.replace(b'"seq":5', b'"seq":4')
    assert altered != line and parse_results(altered, secret=SECRET).rejected
    bad = json.loads(line) | {"seq": "x"}
    bad.pop("mac")
    bad["mac"] = result_mac(SECRET, bad)
    assert "seq" in parse_results(json.dumps(bad).encode() + b"\n", secret=SECRET).lines[0].problem
