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
path only ever says "verified".
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json, to_json

from referee.games import GameError, get_game
from referee.match.record import (
    DecisionLine,
    EventLine,
    FaultLine,
    HeaderLine,
    ReadyLine,
    Record,
    RecordError,
    ResultLine,
    _UnknownLine,
    event_entry_bytes,
    parse_line,
    read_header,
)


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
    header = rec.header
    try:
        spec = get_game(header.game)
        options = spec.normalize_options(header.options)
        state, events = spec.new_game(header.seed, options)
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
    return _conclude(rec.result, forfeited, state, decisions)


def _conclude(result: ResultLine, forfeited: bool, state: Any, decisions: int) -> Verification:
    """The verdict on a record whose every line matched the engine: does the result?"""
    recorded = result.outcome.to_outcome()
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


def verify_fast(path: Path) -> tuple[HeaderLine, Verification] | None:
    """The header and an OK verdict if the record is complete and matches the
    engine line for line in the runner's own encoding; None if anything is
    otherwise: then ``verify_record(read_record(path))`` decides and says why."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    lines = raw.split(b"\n")
    try:
        header = read_header(path, lines[0])
        spec = get_game(header.game)
        if header.rules_version != spec.rules_version:
            return None
        state, events = spec.new_game(header.seed, spec.normalize_options(header.options))
    except (RecordError, GameError):
        return None
    # Each engine event as the record line the runner writes for it (newline dropped).
    pending = deque(event_entry_bytes(to_json(e.data), e.to)[:-1] for e in events)
    decisions = 0
    forfeited = False
    result: ResultLine | None = None
    for line in lines[1:]:
        if line.startswith(_EVENT):
            if not pending or line != pending.popleft():
                return None
        elif line.startswith(_DECISION):
            seat = state.to_act()
            if pending or seat is None:
                return None
            decision, legal = state.decision(), state.legal_actions()
            decisions += 1
            head = b'%s"n":%d,"seat":%d,"decision":%s,"legal":%s,"action":' % (
                _DECISION, decisions, seat, to_json(decision), to_json(legal))
            if not line.startswith(head):
                return None
            try:
                rest = from_json(b'{"action":' + line[len(head):])
            except ValueError:
                return None
            action, ms = rest.get("action"), rest.get("ms")
            if len(rest) != 2 or type(action) is not str or type(ms) not in (int, float):
                return None  # a repeated key, or a mistyped field: the typed path says what
            try:
                pending.extend(event_entry_bytes(to_json(e.data), e.to)[:-1] for e in state.apply(action))
            except GameError:
                return None
        elif not line.strip():
            continue
        else:  # the few other lines (ready, fault, result, kinds of newer referees): typed
            try:
                entry = parse_line(line)
            except ValidationError:
                return None
            if isinstance(entry, ResultLine):
                result = entry
                break
            if isinstance(entry, FaultLine):
                forfeited = True
            elif not isinstance(entry, (ReadyLine, _UnknownLine)):
                return None  # an event or decision line in another encoding, or a second header
    if result is None or pending:
        return None
    verdict = _conclude(result, forfeited, state, decisions)
    return (header, verdict) if verdict.ok else None
