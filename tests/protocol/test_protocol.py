"""Protocol models, codec and framing: pure, no I/O."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from protocol import ActionMsg, HelloMsg, ReadyMsg
from protocol.codec import Violation, decode_bot_line, encode, encode_event, encode_request
from protocol.framing import TOO_LONG, LineBuffer
from protocol.schema import SCHEMA_PATH, render


def test_committed_schema_is_current():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "protocol/schema/protocol.schema.json is stale: run `python -m protocol.schema`"
    )


def test_schema_names_every_message_type():
    schema = json.loads(SCHEMA_PATH.read_text())
    assert set(schema["$defs"]) >= {"HelloMsg", "ReadyMsg", "EventMsg", "RequestMsg", "ActionMsg", "GameOverMsg"}


def test_request_encodes_as_one_json_line():
    line = encode_request(4, 1, "play", {"seat": 1, "hand": ["AS"]}, ["AS"], 1000)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    data = json.loads(line)
    assert data == {"type": "request", "id": 4, "seat": 1, "decision": "play",
                    "state": {"seat": 1, "hand": ["AS"]}, "legal": ["AS"], "time_ms": 1000}


def test_fast_encoders_produce_exactly_the_models_wire_form():
    from protocol import EventMsg, RequestMsg

    fields = dict(id=4, seat=1, decision="play", state={"seat": 1, "hand": ["AS"], "x": None},
                  legal=["AS", "KS"], time_ms=1000)
    line = encode_request(**fields)
    assert RequestMsg.model_validate_json(line) == RequestMsg(**fields)
    assert line == encode(RequestMsg(**fields))
    event = {"type": "play", "seat": 0, "card": "AS"}
    assert encode_event(event) == encode(EventMsg(event=event))


def test_event_and_hello_encode_round_trip():
    assert json.loads(encode_event({"type": "bid", "seat": 0, "bid": "pass"})) == {
        "type": "event", "event": {"type": "bid", "seat": 0, "bid": "pass"}}
    hello = HelloMsg(game="back-alley", rules_version="1", options={}, seat=2, team=0, seats=4,
                     teams=[[0, 2], [1, 3]], limits={"handshake_ms": 10000, "decision_ms": 1000})
    assert HelloMsg.model_validate_json(encode(hello)) == hello


@pytest.mark.parametrize(
    "line,expected",
    [
        (b'{"type":"action","id":3,"action":"AS"}', ActionMsg(type="action", id=3, action="AS")),
        (b'{"type":"ready","name":"bob"}', ReadyMsg(type="ready", name="bob", events=True)),
        (b'{"type":"ready","name":"bob","events":false}', ReadyMsg(type="ready", name="bob", events=False)),
    ],
)
def test_good_bot_lines_decode(line, expected):
    assert decode_bot_line(line) == expected


@pytest.mark.parametrize(
    "line,kind",
    [
        (b"\xff\xfe{}", "invalid_utf8"),
        (b"{nope", "invalid_json"),
        (b"", "invalid_json"),
        (b'{"type":"action","id":3}', "wrong_message"),
        (b'{"type":"action","id":"3","action":"AS"}', "wrong_message"),
        (b'{"type":"action","id":3.0,"action":"AS"}', "wrong_message"),
        (b'{"type":"resign"}', "wrong_message"),
        (b'{"type":"ready","name":"x","extra":1}', "wrong_message"),
        (b"[1,2,3]", "wrong_message"),
        (b"9" * 5000, "invalid_json"),
        (b"[" * 100000, "invalid_json"),
        (b'{"type":"action","id":3,"id":4,"action":"AS"}', "wrong_message"),
        (b'{"type":"action","id":3,"action":"AS","action":"KS"}', "wrong_message"),
    ],
)
def test_bad_bot_lines_become_violations_not_exceptions(line, kind):
    result = decode_bot_line(line)
    assert isinstance(result, Violation)
    assert result.kind == kind
    assert result.detail


def test_line_buffer_splits_lines_across_chunks():
    buf = LineBuffer(100)
    assert buf.feed(b'{"a":') == []
    assert buf.feed(b'1}\n{"b":2}\n{"c"') == [b'{"a":1}', b'{"b":2}']
    assert buf.pending == 4
    assert buf.feed(b":3}\n") == [b'{"c":3}']


def test_line_buffer_caps_a_line_without_holding_it():
    buf = LineBuffer(10)
    assert buf.feed(b"x" * 8) == []
    assert buf.feed(b"x" * 8) == [TOO_LONG]
    assert buf.pending == 0
    for _ in range(1000):  # the rest of the long line is dropped, not buffered
        assert buf.feed(b"y" * 1000) == []
        assert buf.pending == 0
    assert buf.feed(b"zz\nok\n") == [b"ok"]


def test_line_buffer_reports_a_long_line_that_arrives_whole():
    buf = LineBuffer(4)
    assert buf.feed(b"12345\n1234\n") == [TOO_LONG, b"1234"]


@given(st.lists(st.sampled_from([b"\n", b"a", b"bb", b"x" * 7, b"{}\n", b"\n\n", b"y" * 12 + b"\n"]), max_size=30),
       st.lists(st.integers(0, 200), max_size=10), st.integers(1, 12))
def test_line_buffer_gives_the_same_lines_however_the_bytes_are_cut(parts, cuts, cap):
    """Against the obvious framer: split on newlines; a line over the cap is TOO_LONG, once."""
    data = b"".join(parts)
    *complete, rest = data.split(b"\n")
    expected = [line if len(line) <= cap else TOO_LONG for line in complete]
    buf = LineBuffer(cap)
    points = sorted({c for c in cuts if 0 < c < len(data)})
    got = []
    for a, b in zip([0, *points], [*points, len(data)], strict=True):
        got += buf.feed(data[a:b])
    if len(rest) > cap:  # an unfinished line over the cap is refused before its newline comes
        expected.append(TOO_LONG)
    assert got == expected
    assert buf.pending == (len(rest) if len(rest) <= cap else 0)


_text = st.text(max_size=12)  # any text: quotes, backslashes, control characters, non-ASCII
_json = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | _text,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(id=st.integers(0, 10**18), seat=st.integers(0, 9), decision=_text,
       state=st.dictionaries(_text, _json, max_size=5), legal=st.lists(_text, max_size=6),
       time_ms=st.integers(0, 10**9))
def test_request_bytes_are_to_json_of_the_message_dict(id, seat, decision, state, legal, time_ms):
    expected = to_json({"type": "request", "id": id, "seat": seat, "decision": decision,
                        "state": state, "legal": legal, "time_ms": time_ms}) + b"\n"
    assert encode_request(id, seat, decision, state, legal, time_ms) == expected
    assert encode_request(id, seat, decision, state, legal, time_ms, to_json(legal)) == expected
