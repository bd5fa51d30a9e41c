"""The one record walk: a match record re-simulated through its engine, line by line.

``verify`` (``referee replay --verify``), the HTML replay's frames and ``ask``
(``referee ask``, ``referee replay --request``) all go through here; none steps
the engine itself.  A ``Walk`` is the game of one record (OpenSpiel's
``DeserializeState``, python-chess's ``Board`` with its move stack):

* ``Walk(game, seed, options, rules_version)`` (or ``Walk.of(header)``) rebuilds
  the start with ``referee.games.start_game`` and checks the rules version;
* ``walk.run(rec, visitor)`` goes down the record's lines.  Every recorded event
  must be the engine's next one (the same data, seen by the same seats); every
  decision must come when no engine event is still unrecorded, be offered to
  the seat the engine has to act, of the engine's decision kind, with the
  engine's legal list, and its action must be one the engine accepts.  The
  first line that says otherwise raises ``RecordDiverged`` naming it.
  A visitor (python-chess's ``BaseVisitor``: each use is a small class) is told
  of each decision before it is applied (``decision``: return ``STOP`` to end
  the walk there, the state is the one that decision was asked in), after it
  is applied (``applied``, with the engine's events) and of each fault line;
* ``walk.finish(rec)`` checks the end: a result line there (not a truncated
  record), no engine event left unrecorded, and the recorded outcome the
  engine's (or a forfeit, when a bot faulted); ``walk.end(outcome)`` the last two.

``walk.state`` is the engine's state as the walk stands (live: a visitor reads
it, never changes it); ``walk.events`` the engine's events since the last
decision applied (the deal's, at the start); ``walk.decisions`` how many were.

How a line is read is the ``Reading``'s: ``TYPED`` reads ``read_record``'s
models and words every divergence (``verify``'s messages); ``verify``'s fast
path hands ``run_lines`` the runner's own bytes and a reading of its own that
compares bytes instead of parsing (``referee.match.verify``).  The loop is the
same for both.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

from referee.errors import UserFault
from referee.games import Event, GameError, GameSpec, GameState, Outcome, start_game

if TYPE_CHECKING:  # the models: verify's fast path walks without them
    from referee.match.record import DecisionLine, FaultLine, HeaderLine, Record

#: What a visitor's ``decision`` returns to end the walk before that decision is applied.
STOP = True

# The kinds of line the walk tells apart (a ``Reading``'s ``kind``): the record's own names
# (a line model's ``record``); any other kind is skipped.
EVENT, DECISION, FAULT, RESULT, HEADER, OTHER = "event", "decision", "fault", "result", "header", "other"


class RecordDiverged(UserFault):
    """The record says what its engine does not (or the engine cannot rebuild its game).

    ``line`` is the record's 1-based line at fault (1: the header), None when it is
    the record's end; ``decisions`` how many decisions matched before it."""

    def __init__(self, message: str, line: int | None = None, decisions: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.decisions = decisions


def short(value: object, limit: int = 300) -> str:
    """``value`` as text, cut to ``limit`` characters: a record's values go into one-line messages."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Visitor:
    """What a walk tells its caller; each a no-op here, so a visitor defines only what it uses."""

    def decision(self, walk: Walk, line: int, entry: DecisionLine) -> bool | None:
        """Decision ``entry`` (record line ``line``), checked, before the engine applies it:
        ``walk.state`` is the state it was asked in, ``walk.events`` the engine's events since
        the decision before.  Return ``STOP`` to end the walk here, unapplied."""
        return None

    def applied(self, walk: Walk, line: int, entry: DecisionLine, events: list[Event]) -> None:
        """Decision ``entry`` applied: ``walk.state`` is after it, ``events`` what the engine said."""

    def fault(self, walk: Walk, line: int, entry: FaultLine) -> None:
        """A fault line: a bot forfeited at ``walk.state``."""


class Reading(Protocol):
    """How the walk reads one form of record line; ``Any`` is that form (a model, or bytes)."""

    def kind(self, line: Any) -> str:
        """EVENT, DECISION, FAULT, RESULT (the walk ends), HEADER (a second one) or another (skipped)."""
        ...

    def expect(self, events: list[Event]) -> list[Any]:
        """Engine events in the form an event line is compared with (``recorded``)."""
        ...

    @property
    def recorded(self) -> Callable[[Any], Any] | None:
        """What an event line says, in ``expect``'s form (compared with ``==``); None: the line itself."""
        ...

    def event_text(self, line: Any) -> str:
        """The recorded event of an event line, for a message."""
        ...

    def want_text(self, want: Any) -> str:
        """An engine event (``expect``'s form), for a message."""
        ...

    def differs(self, line: Any, want: Any) -> str:
        """How an event line differs from the engine's event ``want``."""
        ...

    def action(self, walk: Walk, line_no: int, line: Any) -> str:
        """The action of a decision line once the line is checked against ``walk.state``
        (seat, kind and legal list); ``RecordDiverged`` (``walk.diverged``) if it differs."""
        ...


class Walk:
    """The game of one record, rebuilt and then re-simulated by ``run`` (module docstring)."""

    spec: GameSpec
    options: dict[str, Any]
    state: GameState

    def __init__(self, game: str, seed: int, options: Any, rules_version: str | None) -> None:
        try:
            self.spec, self.options, self.state, self.events = start_game(game, seed, options)
        except GameError as exc:
            raise RecordDiverged(f"cannot rebuild the game: {exc}", 1) from None
        if rules_version != self.spec.rules_version:
            raise RecordDiverged(f"record uses rules version {rules_version!r}, "
                                 f"this referee has {self.spec.rules_version!r}", 1)
        self.decisions = 0
        self.forfeited = False  # a fault line was passed
        self._unrecorded: deque[Any] = deque()  # engine events no line has matched yet (the reading's form)
        self._reading: Reading | None = None

    @classmethod
    def of(cls, header: HeaderLine) -> Walk:
        return cls(header.game, header.seed, header.options, header.rules_version)

    def diverged(self, line: int | None, message: str) -> RecordDiverged:
        """The error for a divergence at record line ``line`` (prefixed to the message)."""
        where = f"line {line}: " if line is not None else ""
        return RecordDiverged(where + message, line, self.decisions)

    def run(self, rec: Record, visitor: Visitor | None = None) -> bool:
        """Walk the lines ``read_record`` read (the result line is not among them); False if the
        visitor stopped the walk, True if it went to the last line read."""
        return self.run_lines(zip(rec.line_numbers, rec.entries, strict=True), TYPED, visitor)

    def run_lines(self, lines: Iterable[tuple[int, Any]], reading: Reading, visitor: Visitor | None = None) -> bool:
        """Walk ``lines`` (line number, line) read by ``reading``, up to a RESULT line or their end."""
        if self._reading is not reading:
            self._reading = reading
            self._unrecorded = deque(reading.expect(self.events))
        kind_of, expect, recorded, decided = reading.kind, reading.expect, reading.recorded, reading.action
        unrecorded = self._unrecorded
        expect_all, next_unrecorded = unrecorded.extend, unrecorded.popleft
        apply = self.state.apply
        for line_no, line in lines:
            if recorded is None and unrecorded and line == unrecorded[0]:  # the engine's next event, as is
                next_unrecorded()
                continue
            kind = kind_of(line)
            if kind == EVENT:
                if not unrecorded:
                    raise self.diverged(line_no, f"recorded event {reading.event_text(line)} "
                                                 "was not produced by the engine")
                want = next_unrecorded()
                if (line if recorded is None else recorded(line)) != want:
                    raise self.diverged(line_no, reading.differs(line, want))
            elif kind == DECISION:
                if unrecorded:
                    raise self.diverged(line_no, f"engine event {reading.want_text(unrecorded[0])} missing "
                                                 "from the record before this decision")
                action = decided(self, line_no, line)
                if visitor is not None and visitor.decision(self, line_no, line):
                    return False
                try:
                    events = apply(action)
                except GameError as exc:
                    raise self.diverged(line_no, f"illegal action {short(action)!r}: {exc}") from None
                self.decisions += 1
                self.events = events
                expect_all(expect(events))
                if visitor is not None:
                    visitor.applied(self, line_no, line, events)
            elif kind == FAULT:
                self.forfeited = True
                if visitor is not None:
                    visitor.fault(self, line_no, line)
            elif kind == RESULT:
                break
            elif kind == HEADER:
                raise self.diverged(line_no, "a second header")
        return True

    def finish(self, rec: Record) -> str:
        """``end`` for a record ``run`` walked: ``RecordDiverged`` too when it has no result line
        (truncated, or corrupt at ``rec.bad_line``), after ``run`` found its prefix sound."""
        if rec.result is None:
            where = f" (unreadable line {rec.bad_line}: {rec.bad_reason})" if rec.bad_line else ""
            raise self.diverged(None, f"record is truncated{where}: the prefix of {self.decisions} decisions "
                                      "matches the engine, but there is no result")
        return self.end(rec.result.outcome.to_outcome())

    def end(self, recorded: Outcome) -> str:
        """The record's end against the engine's, once every line matched: what was verified,
        or ``RecordDiverged``.  ``recorded`` is the result line's outcome."""
        if self._unrecorded:
            assert self._reading is not None
            raise self.diverged(None, f"engine event {self._reading.want_text(self._unrecorded[0])} "
                                      "missing from the record")
        decisions = self.decisions
        if self.forfeited:
            if recorded.status != "forfeit":
                raise self.diverged(None, "record has a fault but the result is not a forfeit")
            return f"verified {decisions} decisions; the game ended by forfeit ({recorded.reason})"
        engine = self.state.outcome()
        if engine is None:
            raise self.diverged(None, f"the record ends after {decisions} decisions but the engine's game "
                                      "is not over")
        if engine.to_json() != recorded.to_json():
            raise self.diverged(None, f"outcome differs: record has {recorded.to_json()}, engine has "
                                      f"{engine.to_json()}")
        return f"verified {decisions} decisions; outcome matches ({engine.status}, scores {list(engine.scores)})"


class _Typed:
    """``read_record``'s lines; a divergence is said with the values on both sides."""

    kind = staticmethod(attrgetter("record"))
    recorded = staticmethod(attrgetter("event", "to"))

    @staticmethod
    def expect(events: list[Event]) -> list[tuple[Any, list[int] | None]]:
        return [(e.data, list(e.to) if e.to is not None else None) for e in events]

    @staticmethod
    def event_text(line: Any) -> str:
        return short(line.event)

    @staticmethod
    def want_text(want: tuple[Any, list[int] | None]) -> str:
        return short(want[0])

    @staticmethod
    def differs(line: Any, want: tuple[Any, list[int] | None]) -> str:
        return (f"event differs: record has {short(line.event)} (to {line.to}), "
                f"engine has {short(want[0])} (to {want[1]})")

    @staticmethod
    def action(walk: Walk, line_no: int, line: Any) -> str:
        state = walk.state
        seat = state.to_act()
        if seat != line.seat:
            raise walk.diverged(line_no, f"record has seat {line.seat} acting, engine expects seat {seat}")
        if line.decision != state.decision():
            raise walk.diverged(line_no, f"decision kind {short(line.decision)!r} differs from the engine's "
                                         f"{state.decision()!r}")
        legal = state.legal_actions()
        if line.legal != legal:
            raise walk.diverged(line_no, f"legal actions differ: record offers {short(line.legal)}, "
                                         f"engine offers {short(legal)}")
        return str(line.action)


#: The reading of ``read_record``'s models (``Walk.run``).
TYPED: Reading = _Typed()


__all__ = ["DECISION", "EVENT", "FAULT", "HEADER", "OTHER", "RESULT", "STOP", "TYPED", "Reading", "RecordDiverged",
           "Visitor", "Walk", "short"]
