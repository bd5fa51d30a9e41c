"""``verify_fast`` (``replay --verify``'s path) vouches only for records that match
the engine byte for byte in the runner's encoding; everything else goes to the
typed ``verify_record``, whose verdict stands: old or re-encoded records still
verify, tampered ones still diverge."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing
from pydantic_core import to_json

from referee.match.record import FaultLine, HeaderLine, ReadyLine, ResultLine, SeatEntry, parse_line, read_record
from referee.match.types import Limits
from referee.match.verify import _PLAIN, plain_line, verify_fast, verify_record

from .fakes import play

GAMES = ["back-alley", "schmier", "pegs-and-jokers"]


# The tests take ``autojump_clock`` themselves: pytest-trio runs a test on a mock clock only when the
# test function asks for it, and one asked for by this fixture alone is ignored (the game was then
# played on the real clock, and timed out under load).
@pytest.fixture(params=GAMES)
async def recorded(request, tmp_path, autojump_clock):
    assert isinstance(trio.lowlevel.current_clock(), trio.testing.MockClock)  # (see above)
    path = tmp_path / f"{request.param}.jsonl"
    result, _ = await play({}, Limits(), game=request.param, seed=5, record_path=path)
    assert result.fault is None
    return path


def lines_of(path):
    return path.read_bytes().split(b"\n")


def write_lines(path, lines):
    path.write_bytes(b"\n".join(lines))


async def test_a_sound_record_is_verified_with_the_typed_paths_verdict(recorded, autojump_clock):
    fast = verify_fast(recorded)
    assert fast is not None
    header, verdict = fast
    typed = verify_record(read_record(recorded))
    assert typed.ok and verdict == typed
    assert header == json.loads(lines_of(recorded)[0])  # the header line's fields, as read
    assert HeaderLine.model_validate(header) == read_record(recorded).header


async def test_a_record_in_another_encoding_falls_back_and_still_verifies(recorded, autojump_clock):
    # Spaces after separators, as Python's json writes them (an older or another writer).
    respaced = [json.dumps(json.loads(line)).encode() if line else line for line in lines_of(recorded)]
    write_lines(recorded, respaced)
    assert verify_fast(recorded) is None
    assert verify_record(read_record(recorded)).ok


def _first(lines, kind: bytes) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(b'{"record":"' + kind + b'"'))


async def test_another_legal_action_or_a_changed_event_is_not_vouched_for(recorded, autojump_clock):
    lines = lines_of(recorded)
    i = _first(lines, b"decision")
    entry = json.loads(lines[i])
    other = next(a for a in entry["legal"] if a != entry["action"]) if len(entry["legal"]) > 1 else "no-such-action"
    tampered = list(lines)
    tampered[i] = lines[i].replace(b'"action":"%s"' % entry["action"].encode(), b'"action":"%s"' % other.encode())
    write_lines(recorded, tampered)
    assert verify_fast(recorded) is None
    assert not verify_record(read_record(recorded)).ok

    j = _first(lines, b"event")
    tampered = list(lines)
    public = b'"to":null' in lines[j]
    tampered[j] = lines[j].replace(b'"to":null', b'"to":[0]') if public else lines[j][:-1] + b',"x":1}'
    write_lines(recorded, tampered)
    assert verify_fast(recorded) is None


@pytest.mark.parametrize("tail", [b',"action":"x","ms":1}', b',"ms":"1"}', b',"extra":1}'],
                         ids=["repeated-key", "mistyped-ms", "unknown-key"])
async def test_a_decision_line_with_more_or_other_fields_than_the_runner_writes_goes_typed(
        recorded, autojump_clock, tail):
    lines = lines_of(recorded)
    i = _first(lines, b"decision")
    lines[i] = lines[i][:-1] + tail
    write_lines(recorded, lines)
    assert verify_fast(recorded) is None


@pytest.mark.parametrize("form", ["escaped", "exponent-ms", "not-utf8"])
async def test_a_decision_lines_action_and_ms_in_other_forms_are_judged_as_json_reads_them(
        recorded, autojump_clock, form):
    lines = lines_of(recorded)
    i = _first(lines, b"decision")
    entry = json.loads(lines[i])
    action = entry["action"].encode()
    head = lines[i][: lines[i].rindex(b'"action":')]
    if form == "escaped":  # the same action, written with \u escapes: JSON reads the same string
        lines[i] = head + b'"action":"%s","ms":1}' % b"".join(b"\\u%04x" % c for c in action)
    elif form == "exponent-ms":
        lines[i] = head + b'"action":"%s","ms":1.5e-3}' % action
    else:
        lines[i] = head + b'"action":"%s\xff","ms":1}' % action
    write_lines(recorded, lines)
    fast = verify_fast(recorded)
    assert (fast is not None and fast[1].ok) == (form != "not-utf8")


async def test_a_truncated_or_torn_record_is_left_to_the_typed_path(recorded, autojump_clock):
    lines = lines_of(recorded)
    write_lines(recorded, lines[: len(lines) // 2] + [lines[len(lines) // 2][:7]])
    assert verify_fast(recorded) is None
    typed = verify_record(read_record(recorded))
    assert not typed.ok and "truncated" in typed.message


# --- the fast path's plain reading of header, ready, fault and result lines -----------------

MODELS = {"header": HeaderLine, "ready": ReadyLine, "fault": FaultLine, "result": ResultLine}


def test_the_plain_fields_are_the_models_fields():
    def check(fields, model):
        plain = {name.rstrip("?"): not name.endswith("?") for name in fields}
        # The line kind ("record") has a default in the models but picks the model, so it is there.
        assert plain == {name: f.is_required() or name == "record" for name, f in model.model_fields.items()}
        for name, kind in fields.items():
            if isinstance(kind, dict):
                check(kind, model.model_fields[name.rstrip("?")].annotation)
            elif isinstance(kind, list) and isinstance(kind[0], dict):
                check(kind[0], SeatEntry)

    for kind, model in MODELS.items():
        check(_PLAIN[kind], model)


FAULT = {"record": "fault", "seat": 1, "reason": "timeout", "message": "no reply in 1000 ms",
         "stderr_tail": ["a", "b"], "request": 7, "legal": ["1", "2"], "output": "x\\n", "output_bytes": 2,
         "deal": 1, "turn": None}
WRONG = [None, "x", "", 1, -2, 1.5, True, False, [], {}, ["x"], [1], [True], [None], {"a": 1}, 2**70,
         "referee-record/1", "win", "header"]


def _mutations(value):
    """``value`` (a JSON object) with each field, at any depth, dropped or replaced by each of ``WRONG``."""
    for key in list(value):
        yield {k: v for k, v in value.items() if k != key}
        for wrong in WRONG:
            yield {**value, key: wrong}
        inner = value[key]
        if isinstance(inner, dict):
            for m in _mutations(inner):
                yield {**value, key: m}
        elif isinstance(inner, list) and inner and isinstance(inner[0], dict):
            for m in _mutations(inner[0]):
                yield {**value, key: [m, *inner[1:]]}
        elif isinstance(inner, list) and inner:
            for wrong in WRONG:
                yield {**value, key: [*inner[:-1], wrong]}


async def test_a_line_the_plain_reading_accepts_the_models_accept_with_the_same_values(recorded, autojump_clock):
    lines = [line for line in lines_of(recorded) if line]
    samples = [json.loads(line) for line in lines if not line.startswith((b'{"record":"event"',
                                                                           b'{"record":"decision"'))]
    assert {s["record"] for s in samples} == {"header", "ready", "result"}
    for sample in [*samples, FAULT]:
        line = to_json(sample)
        assert plain_line(line) == sample  # the runner's own lines are read without the models
        accepted = 0
        for mutated in _mutations(sample):
            line = to_json(mutated)
            plain = plain_line(line)
            if plain is None:
                continue
            accepted += 1
            typed = parse_line(line)  # raises if the models refuse what the plain reading took
            assert plain == mutated
            if plain["record"] in MODELS:
                assert isinstance(typed, MODELS[plain["record"]])
            else:  # a kind this referee does not know: skipped by both
                assert type(typed).__name__ == "_UnknownLine"
            dump = typed.model_dump(exclude_unset=True)  # the fields the line gave, as the models read them
            assert dump == {k: plain[k] for k in dump}
        assert accepted  # some mutations (an optional field dropped, say) are still sound


async def test_the_plain_reading_takes_only_the_runners_encoding(recorded, autojump_clock):
    header = lines_of(recorded)[0]
    assert plain_line(header) is not None
    assert plain_line(json.dumps(json.loads(header)).encode()) is None  # spaces: the models read it
    assert plain_line(header[:-1] + b',"seed":1}') is None  # a repeated key
    assert plain_line(b"[1]") is None and plain_line(b"{") is None


async def test_a_result_line_in_another_encoding_is_read_by_the_models_and_still_verifies(recorded, autojump_clock):
    lines = lines_of(recorded)
    i = _first(lines, b"result")
    lines[i] = json.dumps(json.loads(lines[i])).encode()
    write_lines(recorded, lines)
    fast = verify_fast(recorded)
    assert fast is not None and fast[1] == verify_record(read_record(recorded))
