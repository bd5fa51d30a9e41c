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
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import from_json, to_json

from referee.errors import UserFault
from referee.games import GameError, Outcome, start_game
from referee.inputs import read_input
from referee.match.record_bytes import RECORD_FORMAT, event_entry_bytes, seats_problem

if TYPE_CHECKING:  # the typed path's models: the fast path imports them only when it falls back
    from referee.match.record import Record


@dataclass(frozen=True)
class Verification:
    ok: bool
    message: str
    line: int | None = None  # 1-based record line of the divergence
    decisions: int = 0


def _short(value: object, limit: int = 300) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def verify_record(rec: Record) -> Verification:
    from referee.match.record import DecisionLine, EventLine, FaultLine

    header = rec.header
    try:
        spec, _, state, events = start_game(header.game, header.seed, header.options)
    except GameError as exc:
        return Verification(False, f"cannot rebuild the game: {exc}", 1)
    if header.rules_version != spec.rules_version:
        return Verification(False, f"record uses rules version {header.rules_version!r}, "
                                   f"this referee has {spec.rules_version!r}", 1)
    pending = deque((e.data, list(e.to) if e.to is not None else None) for e in events)
    decisions = 0
    forfeited = False
    for line_no, entry in zip(rec.line_numbers, rec.entries, strict=True):
        if isinstance(entry, EventLine):
            if not pending:
                return Verification(False, f"line {line_no}: recorded event {_short(entry.event)} "
                                           "was not produced by the engine", line_no, decisions)
            data, to = pending.popleft()
            if entry.event != data or entry.to != to:
                return Verification(False, f"line {line_no}: event differs: record has {_short(entry.event)} "
                                           f"(to {entry.to}), engine has {_short(data)} (to {to})",
                                    line_no, decisions)
        elif isinstance(entry, DecisionLine):
            if pending:
                return Verification(False, f"line {line_no}: engine event {_short(pending[0][0])} missing "
                                           "from the record before this decision", line_no, decisions)
            seat = state.to_act()
            if seat != entry.seat:
                return Verification(False, f"line {line_no}: record has seat {entry.seat} acting, "
                                           f"engine expects seat {seat}", line_no, decisions)
            if entry.decision != state.decision():
                return Verification(False, f"line {line_no}: decision kind {_short(entry.decision)!r} "
                                           f"differs from the engine's {state.decision()!r}", line_no, decisions)
            legal = state.legal_actions()
            if entry.legal != legal:
                return Verification(False, f"line {line_no}: legal actions differ: record offers "
                                           f"{_short(entry.legal)}, engine offers {_short(legal)}",
                                    line_no, decisions)
            try:
                new_events = state.apply(entry.action)
            except GameError as exc:
                return Verification(False, f"line {line_no}: illegal action {_short(entry.action)!r}: {exc}",
                                    line_no, decisions)
            decisions += 1
            pending.extend((e.data, list(e.to) if e.to is not None else None) for e in new_events)
        elif isinstance(entry, FaultLine):
            forfeited = True
    if rec.result is None:
        where = f" (unreadable line {rec.bad_line}: {rec.bad_reason})" if rec.bad_line else ""
        return Verification(False, f"record is truncated{where}: the prefix of {decisions} decisions "
                                   "matches the engine, but there is no result", None, decisions)
    if pending:
        return Verification(False, f"engine event {_short(pending[0][0])} missing from the record", None, decisions)
    return _conclude(rec.result.outcome.to_outcome(), forfeited, state, decisions)


def _conclude(recorded: Outcome, forfeited: bool, state: Any, decisions: int) -> Verification:
    """The verdict on a record whose every line matched the engine: does its outcome?"""
    if forfeited:
        if recorded.status != "forfeit":
            return Verification(False, "record has a fault but the result is not a forfeit", None, decisions)
        return Verification(True, f"verified {decisions} decisions; the game ended by forfeit "
                                  f"({recorded.reason})", None, decisions)
    engine = state.outcome()
    if engine is None:
        return Verification(False, f"the record ends after {decisions} decisions but the engine's game "
                                   "is not over", None, decisions)
    if engine.to_json() != recorded.to_json():
        return Verification(False, f"outcome differs: record has {recorded.to_json()}, engine has "
                                   f"{engine.to_json()}", None, decisions)
    return Verification(True, f"verified {decisions} decisions; outcome matches "
                              f"({engine.status}, scores {list(engine.scores)})", None, decisions)


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
        spec, options, state, events = start_game(header["game"], header["seed"], header["options"])
    except GameError:
        return None
    if header.get("rules_version") != spec.rules_version:
        return None
    seats = header["seats"]
    if not isinstance(seats, list) or not all(isinstance(s, dict) for s in seats) or seats_problem(
            spec, options, [(s.get("seat"), s.get("team")) for s in seats]) is not None:
        return None  # read_record says what is wrong with them
    # Each engine event as the record line the runner writes for it (with the newline that
    # split took off the record's lines).
    pending = deque(event_entry_bytes(to_json(e.data), e.to) for e in events)
    expect, popleft, apply = pending.append, pending.popleft, state.apply
    decisions = 0
    forfeited = False
    result: dict[str, Any] | None = None
    for line in lines[1:]:
        if line.startswith(_EVENT):
            if not pending:
                return None
            want = popleft()
            if len(want) != len(line) + 1 or not want.startswith(line):
                return None
        elif line.startswith(_DECISION):
            seat = state.to_act()
            if pending or seat is None:
                return None
            decisions += 1
            head = b'%s"n":%d,"seat":%d,"decision":%s,"legal":%s,"action":' % (
                _DECISION, decisions, seat, to_json(state.decision()), to_json(state.legal_actions()))
            if not line.startswith(head):
                return None
            plain = _ACTION_MS.fullmatch(line, len(head))
            if plain is not None:  # the runner's form: a string without escapes, a JSON number
                try:
                    action = plain[1].decode()
                except UnicodeDecodeError:
                    return None
            else:
                try:
                    rest = from_json(b'{"action":' + line[len(head):])
                except ValueError:
                    return None
                action, ms = rest.get("action"), rest.get("ms")
                if len(rest) != 2 or type(action) is not str or type(ms) not in (int, float):
                    return None  # a repeated key, or a mistyped field: the typed path says what
            try:
                for e in apply(action):
                    expect(event_entry_bytes(to_json(e.data), e.to))
            except GameError:
                return None
        elif not line.strip():
            continue
        else:  # the few other lines (ready, fault, result, kinds of newer referees)
            entry = plain_line(line)
            if entry is None:
                entry = _typed_line(line)
                if entry is None:
                    return None
            kind = entry["record"]
            if kind == "result":
                result = entry
                break
            if kind == "fault":
                forfeited = True
            elif kind == "header":
                return None  # a second header
    if result is None or pending:
        return None
    verdict = _conclude(Outcome.from_json(result["outcome"]), forfeited, state, decisions)
    return (header, verdict) if verdict.ok else None
