"""Re-simulate a match record through its engine and find the first divergence.

Pure and synchronous: the record's seed and options rebuild the initial
state; every recorded event must equal the engine's, every decision must be
offered to the same seat with the same legal list, and the result must match.
``verify_record`` works on the typed record (``read_record`` validated every
line already).

``verify_fast`` is the fast path for a whole file (``referee replay
--verify``): most of a record is lines the engine can write again, so instead
of parsing them it encodes what the engine says, as the runner does, and
compares bytes; a decision line is compared up to its action, and only the
action and time are parsed.  Any line it cannot vouch for that way (another
encoder's spacing, a corrupt or torn line, a divergence) sends the whole file
down the typed path, which then gives the verdict and its message: the fast
path only ever says "verified".  The few other lines (header, ready, fault,
result) it reads as plain JSON, checked against the fields and types of the
record's models (``_PLAIN``) when they are in the runner's own encoding, so a
sound record is verified without building those pydantic models at all (a
large share of the command's start-up); a line that check cannot vouch for is
read by the models, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import from_json, to_json

from referee.errors import UserFault
from referee.games import Event, Outcome
from referee.inputs import read_input
from referee.match.record_bytes import RECORD_FORMAT, event_entry_bytes, seats_problem
from referee.match.walk import DECISION, EVENT, FAULT, HEADER, OTHER, RESULT, RecordDiverged, Walk

if TYPE_CHECKING:  # the typed path's models: the fast path imports them only when it falls back
    from referee.match.record import Record


@dataclass(frozen=True)
class Verification:
    ok: bool
    message: str
    line: int | None = None  # 1-based record line of the divergence
    decisions: int = 0


def verify_record(rec: Record) -> Verification:
    """The verdict on a record ``read_record`` read: the walk's (``referee.match.walk``)."""
    try:
        walk = Walk.of(rec.header)
        walk.run(rec)
        return Verification(True, walk.finish(rec), None, walk.decisions)
    except RecordDiverged as exc:
        return Verification(False, exc.message, exc.line, exc.decisions)


_EVENT = b'{"record":"event","event":'
_DECISION = b'{"record":"decision",'
# The end of a decision line as the runner writes it: an action without escapes and a JSON number.
_ACTION_MS = re.compile(rb'"([^"\\\x00-\x1f]*)","ms":-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\}')

# The fields of the record lines the fast path reads whole (header, ready, fault, result), as
# ``referee.match.record``'s strict models have them: name -> type, "?" after an optional one.
# A type is int, float (an int is one too), str, bool, dict (a JSON object), [T] (a list of T),
# a tuple of alternatives (None among them: null), a str constant, or a nested field dict.
# tests/match/test_verify_fast.py holds these to the models, field by field.
_SEAT = {"seat": int, "team": int, "name": str, "command": [str], "cwd?": (str, None), "limits?": (dict, None),
         "named?": bool}
_PLAIN: dict[str, dict[str, Any]] = {
    "header": {"record": "header", "format": RECORD_FORMAT, "game": str, "rules_version?": (str, None),
               "options": dict, "seed": int, "seats": [_SEAT], "limits?": (dict, None),
               "started_at?": (str, None), "sandbox?": (str, None)},
    "ready": {"record": "ready", "names": [str], "events": [bool]},
    "fault": {"record": "fault", "seat": int, "reason": str, "message?": str, "stderr_tail?": [str],
              "request?": (int, None), "legal?": ([str], None), "output?": (str, None),
              "output_bytes?": (int, None), "deal?": (int, None), "turn?": (int, None)},
    "result": {"record": "result", "outcome": {
        "status": ("win", "draw", "aborted", "forfeit"), "winners": [int], "scores": [int], "reason?": str,
        "detail?": dict}, "decisions": int, "duration_s": float, "names?": [str]},
}


def _conforms(value: Any, kind: Any) -> bool:
    """Whether ``value`` (parsed JSON) has type ``kind`` in ``_PLAIN``'s notation."""
    if kind is int:
        return type(value) is int
    if kind is float:
        return type(value) in (int, float)
    if kind in (str, bool, dict):
        return type(value) is kind
    if kind is None:
        return value is None
    if isinstance(kind, str):
        return type(value) is str and value == kind
    if isinstance(kind, list):
        return type(value) is list and all(_conforms(v, kind[0]) for v in value)
    if isinstance(kind, tuple):
        return any(_conforms(value, k) for k in kind)
    if type(value) is not dict:
        return False
    for name, field_kind in kind.items():
        key = name.rstrip("?")
        if key in value:
            if not _conforms(value[key], field_kind):
                return False
        elif key == name:  # a required field is missing
            return False
    return True


def plain_line(line: bytes) -> dict[str, Any] | None:
    """A header, ready, fault or result line as parsed JSON, or a line of a kind this
    referee does not know (skipped, as ``read_record`` skips it), if it is in the
    runner's own encoding and has the fields and types the record's models require;
    None if not (then only the models can say what it is)."""
    try:
        value = from_json(line)
    except ValueError:
        return None
    if type(value) is not dict or to_json(value) != line:  # not as the runner writes it (a repeated key, say)
        return None
    kind = value.get("record")
    if type(kind) is not str or kind in ("event", "decision"):
        return None
    fields = _PLAIN.get(kind)
    return value if fields is None or _conforms(value, fields) else None


def _typed_line(line: bytes) -> dict[str, Any] | None:
    """A line ``plain_line`` could not vouch for, read by the record's models (imported
    only now): its parsed JSON if it is a ready, fault, result or unknown line, else None."""
    from pydantic import ValidationError

    from referee.match.record import FaultLine, ReadyLine, ResultLine, _UnknownLine, parse_line

    try:
        entry = parse_line(line)
    except ValidationError:
        return None
    if not isinstance(entry, (ReadyLine, FaultLine, ResultLine, _UnknownLine)):
        return None  # an event or decision line in another encoding, or a second header
    return entry.model_dump()


def _header(path: Path, line: bytes) -> dict[str, Any] | None:
    """The header line as parsed JSON, or None if it is not one."""
    header = plain_line(line)
    if header is not None:
        return header if header["record"] == "header" else None
    from referee.match.record import RecordError, read_header

    try:
        return read_header(path, line).model_dump()
    except RecordError:
        return None


class _Unvouched(RecordDiverged):
    """A line the fast path cannot vouch for: the typed path decides, and says why."""

    def __init__(self) -> None:
        super().__init__("not vouched for by the fast path")


class _RunnerBytes:
    """The walk's reading (``referee.match.walk.Reading``) of a record's lines as the runner
    writes them: an engine event is the line's bytes (``event_entry_bytes``, the newline that
    split took off included), a decision line is compared up to its action, and only the
    action and time are parsed; the few other lines are read by ``plain_line`` (the models
    only when it cannot vouch for one).  Any line it cannot vouch for raises ``_Unvouched``."""

    def __init__(self) -> None:
        self.result: dict[str, Any] | None = None

    recorded = None  # an event line is compared as it is

    def kind(self, line: bytes) -> str:
        if line.startswith(_EVENT):
            return EVENT
        if line.startswith(_DECISION):
            return DECISION
        return OTHER if not line.strip() else self.other(line)

    def other(self, line: bytes) -> str:
        """A ready, fault, result or unknown line (a second header is HEADER)."""
        entry = plain_line(line)
        if entry is None and (entry := _typed_line(line)) is None:
            raise _Unvouched
        kind = entry["record"]
        if kind == "result":
            self.result = entry
            return RESULT
        return FAULT if kind == "fault" else HEADER if kind == "header" else OTHER

    @staticmethod
    def expect(events: list[Event]) -> list[bytes]:
        return [event_entry_bytes(to_json(e.data), e.to)[:-1] for e in events]  # less the newline split took off

    # A divergence is never worded here: the typed path words it.
    @staticmethod
    def event_text(line: bytes) -> str:
        raise _Unvouched

    @staticmethod
    def want_text(want: bytes) -> str:
        raise _Unvouched

    @staticmethod
    def differs(line: bytes, want: bytes) -> str:
        raise _Unvouched

    @staticmethod
    def action(walk: Walk, line_no: int, line: bytes) -> str:
        state = walk.state
        seat = state.to_act()
        if seat is None:
            raise _Unvouched
        head = b'%s"n":%d,"seat":%d,"decision":%s,"legal":%s,"action":' % (
            _DECISION, walk.decisions + 1, seat, to_json(state.decision()), to_json(state.legal_actions()))
        if not line.startswith(head):
            raise _Unvouched
        plain = _ACTION_MS.fullmatch(line, len(head))
        if plain is not None:  # the runner's form: a string without escapes, a JSON number
            try:
                return plain[1].decode()
            except UnicodeDecodeError:
                raise _Unvouched from None
        try:
            rest = from_json(b'{"action":' + line[len(head):])
        except ValueError:
            raise _Unvouched from None
        action, ms = rest.get("action"), rest.get("ms")
        if len(rest) != 2 or type(action) is not str or type(ms) not in (int, float):
            raise _Unvouched  # a repeated key, or a mistyped field: the typed path says what
        return action


def verify_fast(path: Path) -> tuple[dict[str, Any], Verification] | None:
    """The header (its fields) and an OK verdict if the record is complete and
    matches the engine line for line in the runner's own encoding; None if
    anything is otherwise: then ``verify_record(read_record(path))`` decides and
    says why.  A sound record in the runner's encoding is checked without the
    record's pydantic models (``plain_line``)."""
    try:
        raw = read_input(path, "record", UserFault)
    except UserFault:
        return None  # read_record says why
    lines = raw.split(b"\n")
    header = _header(path, lines[0])
    if header is None:
        return None
    try:
        walk = Walk(header["game"], header["seed"], header["options"], header.get("rules_version"))
    except RecordDiverged:
        return None
    seats = header["seats"]
    if not isinstance(seats, list) or not all(isinstance(s, dict) for s in seats) or seats_problem(
            walk.spec, walk.options, [(s.get("seat"), s.get("team")) for s in seats]) is not None:
        return None  # read_record says what is wrong with them
    reading = _RunnerBytes()
    try:
        walk.run_lines(enumerate(lines[1:], start=2), reading)
        result = reading.result
        if result is None:
            return None
        message = walk.end(Outcome.from_json(result["outcome"]))
    except RecordDiverged:
        return None
    return header, Verification(True, message, None, walk.decisions)
