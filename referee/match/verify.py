"""Re-simulate a match record through its engine and find the first divergence.

Pure and synchronous: the record's seed and options rebuild the initial
state; every recorded event must equal the engine's, every decision must be
offered to the same seat with the same legal list, and the result must match.
Works on the typed record (``read_record`` validated every line already).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from referee.games import GameError, get_game
from referee.match.record import DecisionLine, EventLine, FaultLine, Record


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
    recorded = rec.result.outcome.to_outcome()
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
