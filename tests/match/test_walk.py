"""The one record walk (``referee.match.walk``): a record re-simulated through its engine,
every line checked, each step handed to a visitor; a tampered record is refused at its line
with ``RecordDiverged``, by the walk and so by each of its callers (verify, the HTML replay,
``ask``'s request lines)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from trio.testing import MockClock

from referee.errors import UserFault
from referee.match.record import DecisionLine, EventLine, read_record
from referee.match.types import Limits
from referee.match.verify import verify_fast, verify_record
from referee.match.walk import STOP, RecordDiverged, Visitor, Walk

from ..conftest import built_once
from .fakes import play

ROOT = Path(__file__).resolve().parents[2]
GAMES = ["back-alley", "schmier", "pegs-and-jokers"]


@pytest.fixture(scope="module", params=GAMES)
def played(request, tmp_path_factory) -> bytes:
    """A game of fake bots on virtual time, played once per game for the test run: its record's bytes."""
    def build(folder):
        result, _ = trio.run(lambda: play({}, Limits(), game=request.param, seed=3, record_path=folder / "game.jsonl"),
                             clock=MockClock(autojump_threshold=0))
        assert result.fault is None

    return (built_once(tmp_path_factory, f"walk-played-{request.param}", build) / "game.jsonl").read_bytes()


@pytest.fixture
def recorded(played, tmp_path) -> Path:
    """A copy of the module's record for one test to tamper with."""
    path = tmp_path / "game.jsonl"
    path.write_bytes(played)
    return path


def lines_of(path: Path) -> list[str]:
    return path.read_text().split("\n")


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines))


def decision_lines(path: Path) -> list[int]:
    """The 1-based line numbers of the record's decision lines."""
    return [i for i, line in enumerate(lines_of(path), 1) if line.startswith('{"record":"decision"')]


def walk_of(path: Path) -> tuple[Walk, object]:
    rec = read_record(path)
    walk = Walk.of(rec.header)
    walk.run(rec)
    return walk, rec


class Seen(Visitor):
    """Everything a visitor is told, with the engine's view at that moment."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.stop_at = stop_at
        self.before: list[tuple[int, int, int | None, list[str]]] = []  # (line, n, to_act, legal) before applying
        self.after: list[tuple[int, int, int, list[dict]]] = []  # (line, n, decisions done, events' data)

    def decision(self, walk, line, entry):
        self.before.append((line, entry.n, walk.state.to_act(), walk.state.legal_actions()))
        return STOP if entry.n == self.stop_at else None

    def applied(self, walk, line, entry, events):
        assert events is walk.events
        self.after.append((line, entry.n, walk.decisions, [e.data for e in events]))


def test_a_sound_record_is_walked_to_its_end_and_each_decision_is_shown_before_and_after(recorded):
    rec = read_record(recorded)
    decisions = [(line, e) for line, e in zip(rec.line_numbers, rec.entries, strict=True)
                 if isinstance(e, DecisionLine)]
    walk, seen = Walk.of(rec.header), Seen()
    assert walk.run(rec, seen) is True
    assert walk.finish(rec).startswith(f"verified {len(decisions)} decisions; outcome matches")
    assert walk.decisions == len(decisions) == rec.result.decisions
    # Before: the engine's seat and legal list are the record's; after: the count has moved on.
    assert seen.before == [(line, e.n, e.seat, e.legal) for line, e in decisions]
    assert [(line, n, done) for line, n, done, _ in seen.after] == [
        (line, e.n, i) for i, (line, e) in enumerate(decisions, 1)]
    # The events a decision produced are the event lines after it, up to the next decision.
    following: dict[int, list[dict]] = {}
    current = None
    for line, e in zip(rec.line_numbers, rec.entries, strict=True):
        if isinstance(e, DecisionLine):
            current = line
            following[line] = []
        elif isinstance(e, EventLine) and current is not None:
            following[current].append(e.event)
    assert {line: data for line, _, _, data in seen.after} == following


def test_a_visitor_stops_the_walk_at_decision_n_with_the_state_it_was_asked_in(recorded):
    lines = lines_of(recorded)
    at = decision_lines(recorded)
    n = len(at) // 2
    entry = json.loads(lines[at[n - 1] - 1])
    # A line after decision n the engine would refuse: a walk that stops at n never reads it.
    later = json.loads(lines[at[n] - 1])
    later["legal"] = ["not-a-legal-action"]
    lines[at[n] - 1] = json.dumps(later)
    write_lines(recorded, lines)
    rec = read_record(recorded)
    walk, seen = Walk.of(rec.header), Seen(stop_at=n)
    assert walk.run(rec, seen) is False
    assert walk.decisions == n - 1 and len(seen.before) == n and len(seen.after) == n - 1
    assert walk.state.to_act() == entry["seat"] and walk.state.legal_actions() == entry["legal"]
    assert walk.state.decision() == entry["decision"]
    with pytest.raises(RecordDiverged, match=rf"^line {at[n]}: legal actions differ"):
        Walk.of(rec.header).run(rec)  # the whole walk does read it


def tamper(path: Path, line_no: int, change) -> None:
    lines = lines_of(path)
    value = json.loads(lines[line_no - 1])
    change(value)
    lines[line_no - 1] = json.dumps(value)
    write_lines(path, lines)


def refused(path: Path, pattern: str) -> RecordDiverged:
    """The walk's error for ``path``, which must match ``pattern``, and verify's verdict the same."""
    rec = read_record(path)
    with pytest.raises(RecordDiverged, match=pattern) as caught:
        walk = Walk.of(rec.header)
        walk.run(rec)
        walk.finish(rec)
    verdict = verify_record(rec)
    assert not verdict.ok and verdict.message == caught.value.message and verdict.line == caught.value.line
    assert verify_fast(path) is None  # the fast path vouches for none of them
    return caught.value


def test_a_wrong_legal_list_is_caught_at_its_line(recorded):
    k = decision_lines(recorded)[2]
    tamper(recorded, k, lambda d: d.update(legal=d["legal"][::-1] + ["extra"]))
    err = refused(recorded, rf"^line {k}: legal actions differ: record offers \[")
    assert err.line == k and err.decisions == 2 and isinstance(err, UserFault)


def test_an_action_the_engine_refuses_is_caught_at_its_line(recorded):
    k = decision_lines(recorded)[3]
    tamper(recorded, k, lambda d: d.update(action="no-such-action"))
    err = refused(recorded, rf"^line {k}: illegal action 'no-such-action': ")
    assert err.line == k and err.decisions == 3


def test_another_seat_or_decision_kind_is_caught_at_its_line(recorded):
    k = decision_lines(recorded)[1]
    seat = json.loads(lines_of(recorded)[k - 1])["seat"]
    tamper(recorded, k, lambda d: d.update(seat=(seat + 1) % 3))  # another seat the game has
    refused(recorded, rf"^line {k}: record has seat {(seat + 1) % 3} acting, engine expects seat {seat}$")
    tamper(recorded, k, lambda d: d.update(seat=seat, decision="juggle"))
    refused(recorded, rf"^line {k}: decision kind 'juggle' differs from the engine's '")


def test_an_event_that_differs_is_caught_at_its_line(recorded):
    lines = lines_of(recorded)
    k = next(i for i, line in enumerate(lines, 1) if line.startswith('{"record":"event"'))
    tamper(recorded, k, lambda e: e["event"].update(tampered=True))
    refused(recorded, rf"^line {k}: event differs: record has .*'tampered': True.*, engine has ")
    tamper(recorded, k, lambda e: (e["event"].pop("tampered"), e.update(to=[0] if e["to"] is None else None)))
    refused(recorded, rf"^line {k}: event differs: ")


def test_a_missing_or_extra_event_line_is_caught_where_the_record_goes_on_without_it(recorded):
    lines = lines_of(recorded)
    # A decision line right after an event line: the engine's last event before that decision.
    d = next(i for i in decision_lines(recorded) if lines[i - 2].startswith('{"record":"event"'))
    write_lines(recorded, lines[: d - 2] + lines[d - 1:])  # that event deleted: the decision moves up a line
    refused(recorded, rf"^line {d - 1}: engine event .* missing from the record before this decision$")
    write_lines(recorded, lines[: d - 1] + [lines[d - 2]] + lines[d - 1:])  # that event twice
    refused(recorded, rf"^line {d}: recorded event .* was not produced by the engine$")


def test_a_truncated_record_walks_its_prefix_and_is_refused_at_its_end(recorded):
    lines = lines_of(recorded)
    at = decision_lines(recorded)
    cut = at[4]  # up to and including the fifth decision line, then a torn line
    write_lines(recorded, lines[:cut] + [lines[cut][:9]])
    walk, rec = walk_of(recorded)
    assert rec.truncated and walk.decisions == 5
    err = refused(recorded, r"^record is truncated: the prefix of 5 decisions matches the engine, but there is no "
                            r"result$")
    assert err.line is None and err.decisions == 5
    write_lines(recorded, lines[:cut] + ["{not json", *lines[cut:]])  # corrupt in the middle: read up to it
    refused(recorded, rf"^record is truncated \(unreadable line {cut + 1}: .*\): the prefix of 5 decisions")


def test_a_record_whose_engine_event_never_comes_is_refused_at_its_end(recorded):
    lines = lines_of(recorded)
    result = next(i for i, line in enumerate(lines) if line.startswith('{"record":"result"'))
    last_event = max(i for i, line in enumerate(lines[:result]) if line.startswith('{"record":"event"'))
    assert last_event > max(decision_lines(recorded)) - 1  # the last decision produced events
    write_lines(recorded, lines[:last_event] + lines[last_event + 1:])
    refused(recorded, r"^engine event .* missing from the record$")


def test_a_game_it_cannot_rebuild_or_another_rules_version_is_refused_at_line_1(recorded):
    header = read_record(recorded).header
    with pytest.raises(RecordDiverged, match=r"^record uses rules version '0', this referee has '\w+'$") as caught:
        Walk(header.game, header.seed, header.options, "0")
    assert caught.value.line == 1
    with pytest.raises(RecordDiverged, match=r"^cannot rebuild the game: ") as caught:
        Walk("no-such-game", header.seed, header.options, header.rules_version)
    assert caught.value.line == 1


# -- the three callers name the same line: real processes -------------------------------------------------


def referee(*args):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


@pytest.mark.parametrize("played", ["back-alley"], indirect=True)
def test_verify_the_html_replay_and_the_request_lines_refuse_a_tampered_record_at_the_same_line(
        recorded, tmp_path):
    at = decision_lines(recorded)
    k = at[5]
    tamper(recorded, k, lambda d: d.update(legal=["AS"]))
    want = f"line {k}: legal actions differ: record offers ['AS'], engine offers ["
    verify = referee("replay", recorded, "--verify")
    assert verify.returncode == 1 and verify.stdout.startswith(f"DIVERGENCE: {want}"), verify.stdout + verify.stderr
    page = tmp_path / "page.html"
    html = referee("replay", recorded, "--html", page)
    assert html.returncode == 2 and not page.exists(), html.stdout + html.stderr
    assert f"cannot replay: {want}" in html.stderr and len(html.stderr.strip().splitlines()) == 1
    lines = referee("replay", recorded, "--request", 6)  # request 6 is decision line k: the walk reaches it
    assert lines.returncode == 2 and f": {want}" in lines.stderr, lines.stdout + lines.stderr
    assert len(lines.stderr.strip().splitlines()) == 1 and "Traceback" not in lines.stderr
    early = referee("replay", recorded, "--request", 5)  # stopped before line k: never read
    assert early.returncode == 0 and early.stdout.startswith('{"type":"request","id":5,'), early.stderr
