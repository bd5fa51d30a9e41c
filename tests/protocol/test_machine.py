"""The conversation state machine, exhaustively and without processes.

Every state against every kind of input the bot can give, what the referee
may and may not send in each state, and framing: a message split anywhere
is the same message.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import EventMsg, GameOverMsg, HelloMsg
from protocol.codec import encode, encode_event, encode_game_over, encode_hello
from protocol.machine import (
    FAULT_KINDS,
    NEED_DATA,
    Action,
    Conversation,
    EndOfInput,
    Fault,
    LocalProtocolError,
    PartialLine,
    Ready,
    State,
)

MAX_LINE = 64
RID = 5
LEGAL = ["AS", "KS"]
HELLO = HelloMsg(game="back-alley", rules_version="1", options={}, seat=0, team=0, seats=4,
                 teams=[[0, 2], [1, 3]], limits={"handshake_ms": 1000, "decision_ms": 100})
READY = b'{"type":"ready","name":"bob","events":false}\n'
GOOD = b'{"type":"action","id":5,"action":"AS"}\n'
UNEXPECTED = Fault("unexpected_message", "wrote output when no request was pending")


def conversation(state: State) -> Conversation:
    """A conversation brought to ``state`` the way the runner gets there."""
    conv = Conversation(MAX_LINE)
    if state is State.START:
        return conv
    conv.send_hello(HELLO)
    if state is State.AWAIT_READY:
        return conv
    conv.receive_data(READY)
    assert conv.next_event() == Ready("bob", False)
    if state is State.IDLE:
        return conv
    if state is State.DONE:
        conv.send_game_over({"status": "win"}, "win")
        return conv
    if state is State.FAULTED:
        conv.receive_data(b"x")
        assert conv.next_event() == UNEXPECTED
        return conv
    conv.send_request(RID, 0, "play", {"seat": 0}, LEGAL, 100)
    assert state is State.AWAIT_ACTION
    return conv


# What the bot does: bytes, then (True) the end of its output or (False) not.
INPUTS = {
    "nothing": (b"", False),
    "end": (b"", True),
    "partial": (b'{"type":"act', False),
    "partial_end": (b'{"type":"act', True),
    "ready": (READY, False),
    "action": (GOOD, False),
    "action_end": (GOOD, True),
    "wrong_id": (b'{"type":"action","id":4,"action":"AS"}\n', False),
    "illegal": (b'{"type":"action","id":5,"action":"QS"}\n', False),
    "not_json": (b"{nope\n", False),
    "not_utf8": (b'{"type":"ready","name":"\xff"}\n', False),
    "wrong_shape": (b'{"type":"action","id":"5","action":"AS"}\n', False),
    "too_long": (b"x" * (MAX_LINE + 1) + b"\n", False),
    "empty_line": (b"\n", False),
}

S = State
TOO_LONG = Fault("line_too_long", f"a line longer than {MAX_LINE} bytes")
EXPECTED_READY = {
    "nothing": (NEED_DATA, S.AWAIT_READY),
    "end": (EndOfInput(), S.AWAIT_READY),
    "partial": (NEED_DATA, S.AWAIT_READY),
    "partial_end": (PartialLine(12), S.AWAIT_READY),
    "ready": (Ready("bob", False), S.IDLE),
    "action": (Fault("wrong_message", "expected ready, got action"), S.FAULTED),
    "action_end": (Fault("wrong_message", "expected ready, got action"), S.FAULTED),
    "wrong_id": (Fault("wrong_message", "expected ready, got action"), S.FAULTED),
    "illegal": (Fault("wrong_message", "expected ready, got action"), S.FAULTED),
    "not_json": ("invalid_json", S.FAULTED),
    "not_utf8": (Fault("invalid_utf8", "byte 24 is not UTF-8"), S.FAULTED),
    "wrong_shape": ("wrong_message", S.FAULTED),
    "too_long": (TOO_LONG, S.FAULTED),
    "empty_line": ("invalid_json", S.FAULTED),
}
EXPECTED_ACTION = {
    **EXPECTED_READY,
    "nothing": (NEED_DATA, S.AWAIT_ACTION),
    "end": (EndOfInput(), S.AWAIT_ACTION),
    "partial": (NEED_DATA, S.AWAIT_ACTION),
    "partial_end": (PartialLine(12), S.AWAIT_ACTION),
    "ready": (Fault("wrong_message", "expected action, got ready"), S.FAULTED),
    "action": (Action(RID, "AS"), S.IDLE),
    "action_end": (Action(RID, "AS"), S.IDLE),
    "wrong_id": (Fault("wrong_request", "answered request 4, expected 5"), S.FAULTED),
    "illegal": (Fault("illegal_action", "'QS' is not among the 2 legal actions"), S.FAULTED),
}
# Before hello and between requests the bot may write nothing at all, not even part of a line.
SILENT = {name: (UNEXPECTED, S.FAULTED) for name in INPUTS}
SILENT.update({"nothing": (NEED_DATA, None), "end": (EndOfInput(), None)})
EXPECTED = {
    S.START: {k: (v, S.START if s is None else s) for k, (v, s) in SILENT.items()},
    S.IDLE: {k: (v, S.IDLE if s is None else s) for k, (v, s) in SILENT.items()},
    S.AWAIT_READY: EXPECTED_READY,
    S.AWAIT_ACTION: EXPECTED_ACTION,
    # After game_over nothing the bot writes is read any more.
    S.DONE: {name: ((EndOfInput() if end else NEED_DATA), S.DONE) for name, (_, end) in INPUTS.items()},
    # A fault is final: whatever follows, the same fault.
    S.FAULTED: {name: (UNEXPECTED, S.FAULTED) for name in INPUTS},
}


def test_the_table_covers_every_state_and_every_input():
    assert set(EXPECTED) == set(State)
    assert all(set(row) == set(INPUTS) for row in EXPECTED.values())


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.name)
@pytest.mark.parametrize("name", list(INPUTS))
def test_every_state_answers_every_input_as_the_table_says(state, name):
    conv = conversation(state)
    data, end = INPUTS[name]
    if data:
        conv.receive_data(data)
    if end:
        conv.receive_data(b"")  # b"" is the end of the output
    expected, next_state = EXPECTED[state][name]
    event = conv.next_event()
    if isinstance(expected, str):  # the decoder's own wording: only the kind is ours
        assert isinstance(event, Fault) and event.kind == expected and event.detail
    else:
        assert event == expected
    assert conv.state is next_state
    if isinstance(event, Fault):  # sticky: asked again, the same fault
        assert conv.next_event() == event and conv.state is S.FAULTED


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.name)
@pytest.mark.parametrize("name", list(INPUTS))
def test_receive_reply_is_receive_data_then_next_event(state, name):
    """The per-decision shortcut answers every state and input as the two calls do."""
    data, end = INPUTS[name]
    both, one = conversation(state), conversation(state)
    both.receive_data(data)
    expected = both.next_event()
    assert one.receive_reply(data) == expected
    assert one.state is both.state
    if end:
        both.receive_data(b"")
        assert one.receive_reply(b"") == both.next_event()
    assert one.next_event() == both.next_event()
    assert one.pending_bytes == both.pending_bytes


@pytest.mark.parametrize(("max_line", "legal", "data"), [
    (MAX_LINE, LEGAL, GOOD),
    (MAX_LINE, LEGAL, b'{"type":"action","id":6,"action":"AS"}\n'),
    (MAX_LINE, ["KS"], GOOD),
    (len(GOOD) - 2, LEGAL, GOOD),
    (MAX_LINE, LEGAL, GOOD + b"x\n"),
    (MAX_LINE, LEGAL, GOOD[:-1] + b" \n"),
], ids=["legal", "wrong-id", "not-legal-now", "too-long", "more-after", "space"])
def test_a_reply_naming_an_action_seen_before_is_judged_as_the_first_time(max_line, legal, data):
    """The shortcut for an action already read once (receive_reply) says what the full reading says."""
    seen = conversation(State.AWAIT_ACTION)
    assert seen.receive_reply(GOOD) == Action(RID, "AS")  # "AS" has now been read once
    one, both = Conversation(max_line), Conversation(max_line)
    for conv in (one, both):
        conv.send_hello(HELLO)
        conv.receive_data(b'{"type":"ready","name":"b"}\n')  # shorter than the reply: "too-long" reads it
        assert type(conv.next_event()) is Ready
        conv.send_request(RID, 0, "play", {"seat": 0}, legal, 100)
    both.receive_data(data)
    expected = both.next_event()
    assert one.receive_reply(data) == expected
    assert one.state is both.state
    assert one.next_event() == both.next_event()


def test_after_an_action_its_end_of_input_is_the_next_event():
    conv = conversation(S.AWAIT_ACTION)
    conv.receive_data(GOOD)
    conv.receive_data(b"")
    assert conv.next_event() == Action(RID, "AS")
    assert conv.next_event() == EndOfInput()


def test_lines_after_the_action_in_the_same_chunk_are_unexpected_before_the_next_request():
    conv = conversation(S.AWAIT_ACTION)
    conv.receive_data(GOOD + b'{"type":"log"}\n')
    assert conv.next_event() == Action(RID, "AS")
    assert conv.state is S.IDLE
    assert conv.next_event() == UNEXPECTED


def test_part_of_a_line_after_the_action_is_unexpected_too():
    conv = conversation(S.AWAIT_ACTION)
    conv.receive_data(GOOD + b"{")
    assert conv.next_event() == Action(RID, "AS")
    assert conv.next_event() == UNEXPECTED


def test_a_valid_action_before_its_request_is_unexpected():
    conv = conversation(S.IDLE)
    conv.receive_data(GOOD)
    assert conv.next_event() == UNEXPECTED


def test_a_partial_line_at_the_end_reports_its_size_and_a_timeout_can_see_it():
    conv = conversation(S.AWAIT_ACTION)
    conv.receive_data(b'{"type":"action",')
    assert conv.next_event() is NEED_DATA and conv.pending_bytes == 17
    conv.receive_data(b'"id":5')
    assert conv.next_event() is NEED_DATA and conv.pending_bytes == 23
    conv.receive_data(b"")
    assert conv.next_event() == PartialLine(23)


def test_a_too_long_line_without_a_newline_is_refused_before_the_end():
    conv = conversation(S.AWAIT_ACTION)
    conv.receive_data(b"x" * (MAX_LINE + 10))
    assert conv.next_event() == TOO_LONG


def test_a_whole_game_of_requests_and_actions():
    conv = conversation(S.IDLE)
    for rid in range(1, 30):
        legal = [f"c{rid}", "pass"]
        line = conv.send_request(rid, 0, "play", {"n": rid}, legal, 100)
        assert isinstance(line, bytes) and json.loads(line)["id"] == rid and conv.state is S.AWAIT_ACTION
        assert conv.next_event() is NEED_DATA
        conv.receive_data(b'{"type":"action","id":%d,"action":"c%d"}\n' % (rid, rid))
        assert conv.next_event() == Action(rid, f"c{rid}")
        assert conv.next_event() is NEED_DATA  # idle and clean: the next request may go
    conv.send_game_over({"status": "win"}, "loss")
    assert conv.state is S.DONE


# -- what the referee may send when ------------------------------------------------------------

SENDS = {
    "hello": lambda c: c.send_hello(HELLO),
    "request": lambda c: c.send_request(RID, 0, "play", {}, LEGAL, 100),
    "game_over": lambda c: c.send_game_over({"status": "win"}, "win"),
}
ALLOWED = {
    "hello": {S.START},
    "request": {S.IDLE},
    "game_over": set(State) - {S.START},  # to a bot that faulted too: it is told the outcome
}


@pytest.mark.parametrize("state", list(State), ids=lambda s: s.name)
@pytest.mark.parametrize("send", list(SENDS))
def test_the_referee_may_send_each_message_only_in_its_states(state, send):
    conv = conversation(state)
    if state in ALLOWED[send]:
        line = SENDS[send](conv)
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        assert json.loads(line)["type"] == send
    else:
        with pytest.raises(LocalProtocolError):
            SENDS[send](conv)
        assert conv.state is state


@pytest.mark.parametrize("unread,instead,state", [
    (b"{", UNEXPECTED, S.FAULTED),
    (b"{}\n", UNEXPECTED, S.FAULTED),
    (b"", EndOfInput(), S.IDLE),  # b"": the end of its output
], ids=["partial", "line", "end"])
def test_a_request_does_not_go_out_after_output_since_the_last_reply_but_says_what_came(unread, instead, state):
    conv = conversation(S.IDLE)
    conv.receive_data(unread)
    assert SENDS["request"](conv) == instead
    assert conv.state is state


def test_a_request_after_the_actions_leftover_lines_says_they_were_unexpected():
    conv = conversation(S.AWAIT_ACTION)
    conv.receive_data(GOOD + b'{"type":"log"}\n')
    assert conv.next_event() == Action(RID, "AS")
    assert SENDS["request"](conv) == UNEXPECTED


def test_the_sends_encode_with_the_codec():
    conv = Conversation()
    assert conv.send_hello(HELLO) == encode_hello(HELLO) == encode(HELLO)
    assert conv.send_game_over({"status": "draw"}, "draw") == encode_game_over({"status": "draw"}, "draw") \
        == encode(GameOverMsg(outcome={"status": "draw"}, result="draw"))


def test_an_event_encodes_the_same_from_its_dict_or_its_json():
    event = {"type": "play", "seat": 0, "card": "AS"}
    assert encode_event(event) == encode_event(json.dumps(event, separators=(",", ":")).encode()) \
        == encode(EventMsg(event=event))


def test_every_fault_kind_is_a_reason_code_of_the_referee():
    from referee.match.types import FaultReason

    assert {r.value for r in FaultReason} >= FAULT_KINDS


# -- framing: where the bytes are cut does not matter ---------------------------------------------

MESSAGES = [
    (S.AWAIT_READY, READY, Ready("bob", False)),
    (S.AWAIT_ACTION, GOOD, Action(RID, "AS")),
    (S.AWAIT_ACTION, b'{"type":"action","id":5,"action":"K\\u0053"}\n', Action(RID, "KS")),
    (S.AWAIT_ACTION, b'{"type":"action","id":6,"action":"AS"}\n',
     Fault("wrong_request", "answered request 6, expected 5")),
]


@given(st.sampled_from(MESSAGES), st.lists(st.integers(0, 60), max_size=8))
def test_a_reply_cut_anywhere_is_the_same_reply_through_receive_reply(message, cuts):
    state, data, expected = message
    conv = conversation(state)
    points = sorted({c for c in cuts if 0 < c < len(data)})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    for piece in pieces[:-1]:
        assert conv.receive_reply(piece) is NEED_DATA
    assert conv.receive_reply(pieces[-1]) == expected


@given(st.sampled_from(MESSAGES), st.lists(st.integers(0, 60), max_size=8))
def test_a_message_cut_anywhere_is_the_same_message(message, cuts):
    state, data, expected = message
    conv = conversation(state)
    points = sorted({c for c in cuts if 0 < c < len(data)})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    for piece in pieces[:-1]:
        conv.receive_data(piece)
        assert conv.next_event() is NEED_DATA
    conv.receive_data(pieces[-1])
    assert conv.next_event() == expected
