"""The record's typed lines: what the runner writes reads back as the models, once."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_core import to_json

from referee.games import Event
from referee.match.record import (
    RECORD_FORMAT,
    DecisionLine,
    EventLine,
    FaultLine,
    HeaderLine,
    ReadyLine,
    RecordError,
    RecordWriter,
    ResultLine,
    decision_entry_bytes,
    entries_from_dicts,
    event_entry_bytes,
    parse_line,
    read_record,
)

HEADER = {
    "record": "header", "format": RECORD_FORMAT, "game": "back-alley", "rules_version": "1",
    "options": {"max_redeals": 10}, "seed": 3,
    "seats": [{"seat": s, "team": s % 2, "name": "r", "command": ["python3", "r.py"], "cwd": None}
              for s in range(4)],
    "limits": {"decision_s": 1.0}, "started_at": "2026-01-01T00:00:00+00:00",
}
RESULT = {"record": "result", "outcome": {"status": "win", "winners": [0], "scores": [10, 2], "reason": "x",
                                          "detail": {}}, "decisions": 0, "duration_s": 0.1, "names": ["r"] * 4}


def write(path, *lines) -> None:
    path.write_bytes(b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + (b"" if isinstance(line, bytes)
                                                                           else b"\n")
        for line in lines))


def test_the_writer_bytes_read_back_as_typed_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    writer = RecordWriter(path)
    writer.write(HEADER)
    writer.write({"record": "ready", "names": ["a"] * 4, "events": [True, False, True, False]})
    writer.write_raw(event_entry_bytes(b'{"type":"hand","seat":1,"cards":["AS"]}', (1,)))
    writer.write_raw(event_entry_bytes(b'{"type":"bid","seat":1,"bid":"3"}', None))
    writer.write({"record": "decision", "n": 1, "seat": 1, "decision": "bid", "legal": ["3"], "action": "3",
                  "ms": 0.5})
    writer.write({"record": "fault", "seat": 2, "reason": "timeout", "message": "late", "stderr_tail": ["x"]})
    writer.write(RESULT)
    writer.close()
    rec = read_record(path)
    assert isinstance(rec.header, HeaderLine) and rec.header.seed == 3 and rec.seats == 4
    assert rec.header.seats[1].team == 1 and rec.header.sandbox is None
    ready, hand, bid, decision, fault = rec.entries
    assert isinstance(ready, ReadyLine) and ready.events == [True, False, True, False]
    assert isinstance(hand, EventLine) and hand.to == [1] and hand.event["cards"] == ["AS"]
    assert hand.visible_to(1) and not hand.visible_to(0) and bid.to is None and bid.visible_to(3)
    assert isinstance(decision, DecisionLine) and decision.action == "3" and decision.ms == 0.5
    assert isinstance(fault, FaultLine) and fault.reason == "timeout" and fault.stderr_tail == ["x"]
    assert isinstance(rec.result, ResultLine) and rec.result.outcome.to_outcome().scores == (10, 2)
    assert rec.line_numbers == [2, 3, 4, 5, 6] and not rec.truncated and rec.bad_line is None


def test_a_newer_referees_fields_and_line_kinds_are_read_past(tmp_path):
    path = tmp_path / "r.jsonl"
    fault = {"record": "fault", "seat": 0, "reason": "sandbox_denied", "message": "m", "syscall": "ptrace"}
    write(path, {**HEADER, "sandbox": "bwrap", "secret_hash": "abc"}, {"record": "note", "text": "hi"}, fault,
          {**RESULT, "extra": 1})
    rec = read_record(path)
    assert rec.header.sandbox == "bwrap"
    assert [e.record for e in rec.entries] == ["fault"] and rec.entries[0].reason == "sandbox_denied"
    assert rec.line_numbers == [3] and rec.result is not None and not rec.truncated


@pytest.mark.parametrize(("line", "reason"), [
    ({"record": "event", "event": {"type": "x"}, "to": 3}, "to: Input should be a valid array"),
    ({"record": "event", "event": {"type": "x"}, "to": [True]}, "to.0: Input should be a valid integer"),
    ({"record": "decision", "n": 1, "seat": "1", "decision": "bid", "legal": [], "action": "3", "ms": 1},
     "seat: Input should be a valid integer"),
    ({"record": "fault", "seat": 0, "message": "m"}, "reason: missing"),
    ({"record": "result", "decisions": 3, "duration_s": 1}, "outcome: missing"),
    ({"record": 5}, "not a record line"),
    ({"kind": "event"}, "not a record line"),
    (HEADER, "a second header"),
])
def test_a_line_of_the_wrong_shape_marks_the_record_corrupt_there(tmp_path, line, reason):
    path = tmp_path / "r.jsonl"
    ok = {"record": "event", "event": {"type": "deal"}, "to": None}
    write(path, HEADER, ok, line, ok, RESULT)
    rec = read_record(path)
    assert rec.truncated and rec.result is None and rec.bad_line == 3
    assert reason in rec.bad_reason, rec.bad_reason
    assert rec.line_numbers == [2]


def test_a_torn_last_line_is_truncation_not_corruption(tmp_path):
    path = tmp_path / "r.jsonl"
    write(path, HEADER, {"record": "event", "event": {"type": "deal"}, "to": None}, b'{"record":"ev')
    rec = read_record(path)
    assert rec.truncated and rec.bad_line is None and len(rec.entries) == 1


@pytest.mark.parametrize(("header", "message"), [
    ({**HEADER, "format": "referee-record/9"}, "unsupported record format 'referee-record/9'"),
    ({k: v for k, v in HEADER.items() if k != "game"}, "header lacks 'game'"),
    ({k: v for k, v in HEADER.items() if k != "format"}, "header lacks 'format'"),
    ({**HEADER, "options": []}, "line 1: header options: Input should be an object"),
    ({**HEADER, "seats": [{"seat": 0}]}, "line 1: header seats.0.team: missing"),
    ({**HEADER, "seed": 1.5}, "line 1: header seed: Input should be a valid integer"),
    ({"record": "event", "event": {}, "to": None}, "not a match record (no header line)"),
    ([1, 2], "not a match record (first line is not a record header)"),
])
def test_a_bad_header_is_a_record_error_naming_the_problem(tmp_path, header, message):
    path = tmp_path / "r.jsonl"
    write(path, header, RESULT)
    with pytest.raises(RecordError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        read_record(path)
    assert "\n" not in str(info.value)


def test_not_json_and_not_utf8_first_lines_are_record_errors(tmp_path):
    path = tmp_path / "r.jsonl"
    for raw in (b"{garbage\n", b"\xff\xfe\x00{}\n", b"[" * 10_000 + b"\n"):
        path.write_bytes(raw)
        with pytest.raises(RecordError, match="not a match record"):
            read_record(path)


def test_entries_from_the_runners_dicts_are_the_same_models():
    event = Event({"type": "play", "seat": 2, "card": "AS"})
    (line,) = entries_from_dicts([{"record": "event", "event": event.data, "to": None}])
    assert line == parse_line(event_entry_bytes(json.dumps(event.data).encode(), None))
    with pytest.raises(ValidationError):
        entries_from_dicts([{"record": "event", "event": event.data}])


def test_lines_are_strict_and_frozen():
    with pytest.raises(ValidationError):
        parse_line(b'{"record":"decision","n":"1","seat":0,"decision":"bid","legal":[],"action":"1","ms":1}')
    line = parse_line(b'{"record":"fault","seat":0,"reason":"timeout"}')
    assert line.message == "" and line.stderr_tail == []
    with pytest.raises(ValidationError):
        line.seat = 3


_text = st.text(max_size=12)  # any text: quotes, backslashes, control characters, non-ASCII


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 10**18), seat=st.integers(0, 9), decision=_text, legal=st.lists(_text, max_size=6),
       action=_text, ms=st.floats(0, 1e7, allow_nan=False) | st.sampled_from([0.0, 0.001, 1e-05, 12.5, 1e16]))
def test_decision_line_bytes_are_to_json_of_the_line_dict(n, seat, decision, legal, action, ms):
    """The runner's decision line (legal list encoded once, for the request) is the dict's own encoding."""
    expected = to_json({"record": "decision", "n": n, "seat": seat, "decision": decision, "legal": legal,
                        "action": action, "ms": ms}) + b"\n"
    assert decision_entry_bytes(n, seat, decision, to_json(legal), action, ms) == expected
