"""Hypothesis-generated bot lines always become a value: a message, or a fault with a reason.

Two levels: the pure decoder and reply check (thousands of lines, no I/O),
and the real match runner with a bot that sends a generated line as its reply
(a few dozen games): no exception escapes the runner and nothing hangs.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from protocol.codec import Violation, decode_bot_line
from protocol.machine import Action, Fault, read_action
from protocol.messages import ActionMsg, ReadyMsg
from referee.match.runner import run_match
from referee.match.types import BotSpec, FaultReason, Limits

ROOT = Path(__file__).resolve().parents[2]
REPLIER = ROOT / "sample_bots" / "misbehaving" / "replies_from_file.py"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"

PROTOCOL_FAULTS = {
    FaultReason.INVALID_UTF8, FaultReason.INVALID_JSON, FaultReason.WRONG_MESSAGE, FaultReason.WRONG_REQUEST,
    FaultReason.ILLEGAL_ACTION, FaultReason.LINE_TOO_LONG, FaultReason.UNEXPECTED_MESSAGE,
}
RID = 7
LEGAL = ["AS", "pass", "3"]
GOOD = {"type": "action", "id": RID, "action": "AS"}

# -- strategies -----------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda kids: st.lists(kids, max_size=4)
                           | st.dictionaries(st.text(max_size=8), kids, max_size=4), max_leaves=12)


def dumps(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode()


@st.composite
def truncated(draw) -> bytes:
    full = dumps(draw(st.sampled_from([GOOD, {"type": "ready", "name": "x"}])))
    return full[: draw(st.integers(0, len(full) - 1))]


@st.composite
def deep(draw) -> bytes:
    depth = draw(st.integers(50, 20000))
    opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
    inner = opener * depth + b"1" + closer * depth
    where = draw(st.sampled_from(["bare", "action", "extra"]))
    if where == "bare":
        return inner
    if where == "action":
        return b'{"type":"action","id":%d,"action":' % RID + inner + b"}"
    return b'{"type":"action","id":%d,"action":"AS","x":' % RID + inner + b"}"


@st.composite
def huge_number(draw) -> bytes:
    digits = draw(st.integers(19, 6000))
    number = draw(st.sampled_from([b"9" * digits, b"-" + b"9" * digits, b"1e%d" % digits, b"1.5e-%d" % digits,
                                   b"NaN", b"Infinity", b"-Infinity", b"%d" % (RID + 2**64)]))
    field = draw(st.sampled_from(["id", "action"]))
    if field == "id":
        return b'{"type":"action","id":' + number + b',"action":"AS"}'
    return b'{"type":"action","id":%d,"action":' % RID + number + b"}"


@st.composite
def duplicate_keys(draw) -> bytes:
    key = draw(st.sampled_from(["type", "id", "action"]))
    second = draw(st.sampled_from([GOOD[key], "ready", RID + 1, "pass", "AS"]))
    first = json.dumps(GOOD)[1:-1]
    return ("{" + first + f",{json.dumps(key)}:{json.dumps(second)}" + "}").encode()


@st.composite
def unknown_fields(draw) -> bytes:
    key = draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in GOOD))
    return dumps({**GOOD, key: draw(json_values)})


@st.composite
def wrong_types(draw) -> bytes:
    key = draw(st.sampled_from(["type", "id", "action"]))
    value = draw(json_values.filter(lambda v: v != GOOD[key] and not (key == "id" and v == RID)))
    return dumps({**GOOD, key: value})


@st.composite
def wrong_shapes(draw) -> bytes:
    obj = dict(GOOD)
    for key in draw(st.lists(st.sampled_from(["type", "id", "action"]), min_size=1, unique=True)):
        del obj[key]
    return dumps(obj) if draw(st.booleans()) else dumps(draw(json_values.filter(lambda v: not isinstance(v, dict))))


MUST_FAULT = truncated() | deep() | huge_number() | duplicate_keys() | unknown_fields() | wrong_types() | wrong_shapes()
ANY_LINE = st.binary(max_size=300) | MUST_FAULT | st.just(dumps(GOOD)) | st.text(max_size=100).map(str.encode)


# -- the pure decoder ------------------------------------------------------------------------


@given(st.binary(max_size=2000))
@settings(max_examples=1500)
def test_any_bytes_decode_to_a_message_or_a_violation_with_a_reason(line):
    msg = decode_bot_line(line)
    if isinstance(msg, Violation):
        assert msg.kind in ("invalid_utf8", "invalid_json", "wrong_message") and msg.detail
    else:
        assert isinstance(msg, (ActionMsg, ReadyMsg))


@pytest.mark.slow
@given(ANY_LINE)
@settings(max_examples=1500)
@example(dumps(GOOD))
def test_every_reply_line_is_an_action_or_a_protocol_fault(line):
    event = read_action(line, RID, LEGAL)
    if isinstance(event, Fault):
        assert FaultReason(event.kind) in PROTOCOL_FAULTS and event.detail
    else:
        assert isinstance(event, Action) and event.id == RID and event.action in LEGAL


@pytest.mark.slow
@given(MUST_FAULT)
@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@example(b'{"type":"action","id":7,"action":"pass","action":"AS"}')
@example(b'{"type":"ready","name":"x","type":"action","id":7,"action":"AS"}')
@example(b'{"type":"action","id":' + b"9" * 4400 + b',"action":"AS"}')
@example(b"[" * 100000)
def test_truncated_deep_huge_duplicated_unknown_or_mistyped_replies_are_faults(line):
    assume(line != dumps(GOOD))
    event = read_action(line, RID, LEGAL)
    assert isinstance(event, Fault), f"accepted {line[:200]!r}"
    assert FaultReason(event.kind) in PROTOCOL_FAULTS and event.detail


def test_a_duplicate_key_is_named():
    event = read_action(b'{"type":"action","id":7,"action":"pass","action":"AS"}', RID, LEGAL)
    assert event == Fault("wrong_message", "duplicate key 'action'")


# -- the real runner -----------------------------------------------------------------------------

TEMPLATES = st.sampled_from([
    b'{"type":"action","id":{ID},"action":{LEGAL}}',  # a good reply
    b'{"type":"action","id":{ID},"action":{LEGAL},"action":"zz"}',
    b'{"type":"action","id":{ID},"action":{LEGAL}}\n{"type":"action","id":{ID},"action":{LEGAL}}',
    b'{"type":"action","id":{ID},"action":{LEGAL},"note":1}',
])
RUNNER_LINES = TEMPLATES | MUST_FAULT | st.binary(max_size=200) | st.binary(min_size=5000, max_size=9000)


@pytest.mark.slow
@given(RUNNER_LINES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_runner_turns_any_reply_into_a_result_without_hanging(line):
    with tempfile.TemporaryDirectory() as tmp:
        reply = Path(tmp) / "reply.bin"
        reply.write_bytes(line)
        # The reply file is given to the sandboxed bot as an extra read-only path.
        bots = [BotSpec("replier", (sys.executable, str(REPLIER), "--reply", str(reply)), ro_paths=(str(reply),))]
        bots += [BotSpec("random", (sys.executable, str(RANDOM_BOT), str(s))) for s in (1, 2, 3)]
        limits = Limits(handshake_s=5, decision_s=2, max_line_bytes=4096, grace_s=0.2, term_s=0.2)

        async def main():
            with trio.fail_after(30):
                return await run_match("back-alley", {}, bots, seed=1, limits=limits,
                                       record_path=Path(tmp) / "r.jsonl")

        result = trio.run(main)
    if result.fault is None:  # only a well-formed reply lets the game go on
        assert line.startswith(b'{"type":"action","id":{ID},"action":{LEGAL}}') and b"\n" not in line
        assert result.outcome.status in ("win", "draw", "aborted")
    else:
        assert result.fault.seat == 0 and result.fault.reason in PROTOCOL_FAULTS, result.fault
        assert result.outcome.status == "forfeit" and result.outcome.winners == (1,)


# -- the plain-action fast path -------------------------------------------------------

from protocol.codec import decode_plain_action  # noqa: E402


def _near_plain_lines():
    """Lines at and around the plain action form: right ones, and one edit away."""
    ids = st.integers(min_value=-5, max_value=10**19).map(str) | st.sampled_from(["01", "1.0", "1e2", " 1", "-0"])
    actions = st.text(max_size=12) | st.sampled_from(["AS", "pass", "play:7H", "a\\u0041", 'x"y', "x" * 1001])
    plain = st.builds(lambda i, a: f'{{"type":"action","id":{i},"action":"{a}"}}', ids, actions)
    edits = st.sampled_from(["", " ", "\r", ",", "}", '"', "\\", "\x00", "é", '"type":"action",'])
    def edited(line: str, pos: int, edit: str) -> bytes:
        at = pos % (len(line) + 1)
        return (line[:at] + edit + line[at:]).encode()

    return st.builds(edited, plain, st.integers(min_value=0), edits)


@given(_near_plain_lines())
@settings(max_examples=3000)
@example(b'{"type":"action","id":7,"action":"AS"}')
@example(b'{"type":"action","id":07,"action":"AS"}')
@example(b'{"type":"action","id":7,"action":"AS","id":8}')
@example(b'{"type":"action","id":7,"action":"A\\u0053"}')
def test_plain_action_fast_path_agrees_with_the_decoder(line: bytes) -> None:
    """Whenever the fast path accepts a line, the general decoder reads the same
    message from it (so ``read_action`` gives the same answer either way)."""
    fast = decode_plain_action(line)
    full = decode_bot_line(line)
    if fast is not None:
        assert isinstance(full, ActionMsg), (line, full)
        assert (full.id, full.action) == fast
    if isinstance(full, ActionMsg) and 0 <= full.id < 10**18 and "\\" not in line.decode() \
            and all(32 <= ord(c) < 127 for c in full.action) \
            and line == f'{{"type":"action","id":{full.id},"action":"{full.action}"}}'.encode():
        assert fast == (full.id, full.action), line  # the common form really takes the fast path


def test_plain_action_fast_path_refuses_what_it_must() -> None:
    assert decode_plain_action(b'{"type":"action","id":7,"action":"AS"}') == (7, "AS")
    for line in (b'{"type":"action","id":07,"action":"AS"}', b'{"type":"action","id":-7,"action":"AS"}',
                 b'{"type":"action","id":7,"action":"A\\"S"}', b'{"type":"action","id":7,"action":"AS"} ',
                 b'{"type":"action","id":7,"action":"' + b"x" * 1001 + b'"}',
                 b'{"type":"action","id":7,"action":"AS","id":7}', b'{"id":7,"type":"action","action":"AS"}'):
        assert decode_plain_action(line) is None, line
