"""``verify_fast`` (``replay --verify``'s path) vouches only for records that match
the engine byte for byte in the runner's encoding; everything else goes to the
typed ``verify_record``, whose verdict stands: old or re-encoded records still
verify, tampered ones still diverge."""

from __future__ import annotations

import json

import pytest

from referee.match.record import read_record
from referee.match.types import Limits
from referee.match.verify import verify_fast, verify_record

from .fakes import play

GAMES = ["back-alley", "schmier", "pegs-and-jokers"]


@pytest.fixture(params=GAMES)
async def recorded(request, tmp_path, autojump_clock):
    path = tmp_path / f"{request.param}.jsonl"
    result, _ = await play({}, Limits(), game=request.param, seed=5, record_path=path)
    assert result.fault is None
    return path


def lines_of(path):
    return path.read_bytes().split(b"\n")


def write_lines(path, lines):
    path.write_bytes(b"\n".join(lines))


async def test_a_sound_record_is_verified_with_the_typed_paths_verdict(recorded):
    fast = verify_fast(recorded)
    assert fast is not None
    header, verdict = fast
    typed = verify_record(read_record(recorded))
    assert typed.ok and verdict == typed
    assert header == read_record(recorded).header


async def test_a_record_in_another_encoding_falls_back_and_still_verifies(recorded):
    # Spaces after separators, as Python's json writes them (an older or another writer).
    respaced = [json.dumps(json.loads(line)).encode() if line else line for line in lines_of(recorded)]
    write_lines(recorded, respaced)
    assert verify_fast(recorded) is None
    assert verify_record(read_record(recorded)).ok


def _first(lines, kind: bytes) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(b'{"record":"' + kind + b'"'))


async def test_another_legal_action_or_a_changed_event_is_not_vouched_for(recorded):
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
async def test_a_decision_line_with_more_or_other_fields_than_the_runner_writes_goes_typed(recorded, tail):
    lines = lines_of(recorded)
    i = _first(lines, b"decision")
    lines[i] = lines[i][:-1] + tail
    write_lines(recorded, lines)
    assert verify_fast(recorded) is None


async def test_a_truncated_or_torn_record_is_left_to_the_typed_path(recorded):
    lines = lines_of(recorded)
    write_lines(recorded, lines[: len(lines) // 2] + [lines[len(lines) // 2][:7]])
    assert verify_fast(recorded) is None
    typed = verify_record(read_record(recorded))
    assert not typed.ok and "truncated" in typed.message
