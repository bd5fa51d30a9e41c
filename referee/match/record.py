"""The match record: one JSONL file per game, data rather than diagnostics.

Line kinds (the ``"record"`` key), each a pydantic model below:

* ``header``   (``HeaderLine``) game, rules version, options, seed, seats (name,
  command, cwd, team), limits, start time; ``sandbox`` when the launcher is known
* ``ready``    (``ReadyLine``) the names the bots gave and whether each wants events
* ``event``    (``EventLine``) an engine event and the seats that may see it (``to``: null = public)
* ``decision`` (``DecisionLine``) seat, decision kind, the legal actions offered, the action taken, ms taken
* ``fault``    (``FaultLine``) the seat, reason code, message and last stderr lines of a forfeiting bot;
  the request it refused (``request``, with its ``legal`` list) when one of its was pending, the
  offending output (``output``, escaped, at most 2 KB; ``output_bytes`` its full length) and
  where the game was (``deal`` or ``turn``)
* ``result``   (``ResultLine``) the outcome, decision count, duration

Writing and reading are separate on purpose.  The match runner writes plain
dicts and pre-encoded bytes (``RecordWriter``; ``event_entry_bytes`` and
``decision_entry_bytes`` from ``record_bytes``): that is on the per-decision
path, and the bytes on disk are the format.  Reading
(``read_record``) parses and validates each line once, with pydantic-core's
JSON parser, into these frozen models; replay, verification and the
renderers (``referee.replay``) work on the typed values only.

Compatibility: every model ignores keys it does not know, so a newer referee
may add optional fields (``sandbox`` in the header was one; faults may gain
more) and an older one still reads its records; a line of a kind this
version does not know is skipped.  A missing or mistyped known field is an
error: in the header the file is refused (``RecordError``); in a later line
the record is read up to the line before it and marked corrupt there
(``Record.bad_line``, ``Record.bad_reason``).

Lines are written as the game goes and flushed at least every 0.1 s
(``runner.RECORD_FLUSH_S``), so a killed referee leaves a valid prefix that
``read_record`` accepts as truncated (a torn last line is dropped).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter, ValidationError
from pydantic_core import to_json

from referee.errors import OutputError, UserFault
from referee.games import GAMES, GameError, Outcome
from referee.inputs import read_input
from referee.match.record_bytes import RECORD_FORMAT as RECORD_FORMAT  # re-exported: the runner's
from referee.match.record_bytes import decision_entry_bytes as decision_entry_bytes  # bytes live there
from referee.match.record_bytes import event_entry_bytes as event_entry_bytes
from referee.match.record_bytes import seats_problem


class RecordError(UserFault):
    """The file is not a readable match record: the user's input is at fault."""


# ---------------------------------------------------------------------------
# Writing (the match runner's side: dicts and bytes, no models on the hot path).


class RecordWriter:
    """Appends record lines to a file.  Not async: local file writes are short.

    A write that the file system refuses (a full disk) raises ``OutputError``
    naming the record; what was written before it stays a readable prefix."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            # Held open across writes and closed by close(): no with-block fits.
            self._file: BinaryIO = open(self.path, "wb")  # noqa: SIM115
        except OSError as exc:
            raise OutputError.of(self.path, exc, "record") from None

    def write(self, entry: dict[str, Any]) -> None:
        try:
            self._file.write(to_json(entry) + b"\n")
        except OSError as exc:
            raise OutputError.of(self.path, exc, "record") from None

    def write_raw(self, line: bytes) -> None:
        try:
            self._file.write(line)
        except OSError as exc:
            raise OutputError.of(self.path, exc, "record") from None

    def flush(self) -> None:
        try:
            self._file.flush()
        except OSError as exc:
            raise OutputError.of(self.path, exc, "record") from None

    def close(self) -> None:
        if self._file.closed:
            return
        try:
            self._file.close()  # flushes; the file is closed even when that fails
        except OSError as exc:
            raise OutputError.of(self.path, exc, "record") from None


# ---------------------------------------------------------------------------
# The line models (the reading side).


class _Line(BaseModel):
    # strict: a record is machine-written, so "3" is not 3 and true is not 1;
    # extra="ignore": fields added by newer referees are skipped, not refused.
    # allow_inf_nan=False: the runner never writes NaN or Infinity (they are no JSON numbers).
    model_config = ConfigDict(frozen=True, strict=True, extra="ignore", allow_inf_nan=False)


#: The tokens of the numbers JSON has not (the record's parser reads them); a line without them has none.
_NONFINITE = (b"NaN", b"Infinity")


def _finite(value: Any) -> Any:
    """``value`` if no number in it is NaN or infinite (they are no JSON numbers; the runner never
    writes one), else ``ValueError`` saying where; nesting is bounded already by the JSON parser.
    Typed float fields refuse them themselves (``allow_inf_nan=False``); this walks the JSON objects
    whose shape is the game's (options, events, outcome detail), only for a line holding such a token."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{where.lstrip('.')}: {item} (NaN and infinity are no JSON numbers)")
        if isinstance(item, dict):
            stack.extend((f"{where}.{k}", v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(item))
    return value


class SeatEntry(_Line):
    """One seat in the header: who played it."""

    seat: int
    team: int
    name: str
    command: list[str]
    cwd: str | None = None
    limits: dict[str, Any] | None = None  # the bot's own limits (a tournament entrant's), if it had any
    named: bool = False  # its name was given (an entrant's, ``--name``): shown instead of its ready name


class HeaderLine(_Line):
    record: Literal["header"] = "header"
    format: Literal["referee-record/1"]
    game: str
    rules_version: str | None = None
    options: dict[str, Any]
    seed: int
    seats: list[SeatEntry]
    limits: dict[str, Any] | None = None
    started_at: str | None = None
    sandbox: str | None = None  # how bots were launched ("bwrap", "off", ...); absent in older records


class ReadyLine(_Line):
    record: Literal["ready"] = "ready"
    names: list[str]
    events: list[bool]


class EventLine(_Line):
    """An engine event as recorded.  ``event`` is the engine's JSON (its shape is
    the game's, checked against the engine by ``verify``); ``to`` lists the seats
    that may see it, ``None`` when it is public."""

    record: Literal["event"] = "event"
    event: dict[str, Any]
    to: list[int] | None

    def visible_to(self, seat: int) -> bool:
        return self.to is None or seat in self.to


class DecisionLine(_Line):
    record: Literal["decision"] = "decision"
    n: int
    seat: int
    decision: str
    legal: list[str]
    action: str
    ms: float


class FaultLine(_Line):
    """A forfeiting bot.  ``reason`` is a ``FaultReason`` value, kept as text so
    that a record naming a reason added later still reads."""

    record: Literal["fault"] = "fault"
    seat: int
    reason: str
    message: str = ""
    stderr_tail: list[str] = []
    request: int | None = None  # the request id (a decision line's ``n``) it refused, if one was pending
    legal: list[str] | None = None  # that request's legal list
    output: str | None = None  # the offending output, escaped (``types.escape_output``) and capped
    output_bytes: int | None = None  # its length before the cap
    deal: int | None = None  # where the game was: the deal (card games) ...
    turn: int | None = None  # ... or the turn (Pegs and Jokers)


class OutcomeEntry(_Line):
    status: Literal["win", "draw", "aborted", "forfeit"]
    winners: list[int]
    scores: list[int]
    reason: str = ""
    detail: dict[str, Any] = {}

    def to_outcome(self) -> Outcome:
        return Outcome(self.status, tuple(self.winners), tuple(self.scores), self.reason, dict(self.detail))


class ResultLine(_Line):
    record: Literal["result"] = "result"
    outcome: OutcomeEntry
    decisions: int
    duration_s: float
    names: list[str] = []


#: A line after the header.
Entry = ReadyLine | EventLine | DecisionLine | FaultLine
_KINDS = {"header", "ready", "event", "decision", "fault", "result"}


def _kind(value: Any) -> str | None:
    kind = value.get("record") if isinstance(value, dict) else getattr(value, "record", None)
    if not isinstance(kind, str):
        return None  # not a record line at all
    return kind if kind in _KINDS else "unknown"


class _UnknownLine(BaseModel):
    """A line kind from a newer referee: read, then skipped."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    record: str


_LINE: TypeAdapter[Any] = TypeAdapter(Annotated[
    Annotated[HeaderLine, Tag("header")] | Annotated[ReadyLine, Tag("ready")]
    | Annotated[EventLine, Tag("event")] | Annotated[DecisionLine, Tag("decision")]
    | Annotated[FaultLine, Tag("fault")] | Annotated[ResultLine, Tag("result")]
    | Annotated[_UnknownLine, Tag("unknown")],
    Discriminator(_kind, custom_error_type="not_a_record_line",
                  custom_error_message="not a record line (no \"record\" kind)"),
])


def parse_line(line: bytes | str) -> HeaderLine | Entry | ResultLine | _UnknownLine:
    """One record line, parsed and validated; ``ValidationError`` if it is not one."""
    return _LINE.validate_json(line)


def entries_from_dicts(entries: Iterable[Mapping[str, Any]]) -> list[Entry]:
    """Typed entries from the dicts the match runner keeps (``MatchResult.entries``)."""
    out: list[Entry] = []
    for entry in entries:
        line = _LINE.validate_python(dict(entry))
        if isinstance(line, (ReadyLine, EventLine, DecisionLine, FaultLine)):
            out.append(line)
    return out


def describe_validation_error(exc: ValidationError) -> str:
    """The first problem of ``exc`` as a short phrase: ``to: Input should be a valid list``."""
    err = exc.errors(include_url=False)[0]
    loc = [str(x) for x in err["loc"]]
    if loc and loc[0] in _KINDS | {"unknown"}:
        loc = loc[1:]  # the union's tag
    msg = err["msg"]
    if err["type"] == "missing":
        msg = "missing"
    where = ".".join(loc)
    return f"{where}: {msg}" if where else msg


# ---------------------------------------------------------------------------
# Reading.


@dataclass
class Record:
    path: Path
    header: HeaderLine
    entries: list[Entry] = field(default_factory=list)  # every line after the header, before the result
    line_numbers: list[int] = field(default_factory=list)  # 1-based file line of each entry
    result: ResultLine | None = None
    truncated: bool = False
    bad_line: int | None = None  # 1-based line number of an unreadable line, if any
    bad_reason: str | None = None  # what is wrong with it

    @property
    def seats(self) -> int:
        return len(self.header.seats)

    @property
    def names(self) -> list[str]:
        """What to call each seat's bot, as ``play`` showed it: its ``ready`` name (or ``--name``),
        from the result line, else the ready line; the header's (named after the command, written
        before ``ready``) only when the record ends before ``ready``."""
        if self.result is not None and len(self.result.names) == self.seats:
            return list(self.result.names)
        ready = next((e for e in self.entries if isinstance(e, ReadyLine)), None)
        if ready is not None and len(ready.names) == self.seats:
            return list(ready.names)
        return [s.name for s in self.header.seats]


def _entry_problem(entry: Any, seats: int, teams: int) -> str | None:
    """Why a line names a seat or team the game does not have (or a count out of range), if it does.
    On every line of a record read: the common kinds first, by exact type."""
    kind = type(entry)
    if kind is EventLine:
        to = entry.to
        if to is None or all(0 <= s < seats for s in to):
            return None
        return f"to: {to}: the game has seats 0 … {seats - 1}"
    if kind is DecisionLine or kind is FaultLine:
        if not 0 <= entry.seat < seats:
            return f"seat {entry.seat}: the game has seats 0 … {seats - 1}"
        if kind is DecisionLine and (entry.n < 1 or entry.ms < 0):
            return f"request {entry.n} taking {entry.ms} ms: ids count from 1, times from 0"
        return None
    if kind is ReadyLine and not len(entry.names) == len(entry.events) == seats:
        return f"{len(entry.names)} names and {len(entry.events)} event choices for {seats} seats"
    if kind is ResultLine and any(not 0 <= t < teams for t in entry.outcome.winners):
        return f"outcome: winners {entry.outcome.winners}: the game has teams 0 … {teams - 1}"
    return None


def check_header(path: Path, header: HeaderLine) -> tuple[int, int] | None:
    """The header against its game: its options valid and its seats the game's (``RecordError``
    if not); the game's (seats, teams), or None for a game this referee does not know."""
    spec = GAMES.get(header.game)
    if spec is None:
        return None
    try:
        options = spec.normalize_options(dict(header.options))
    except GameError as exc:
        raise RecordError(f"{path}: header options: {exc}") from None
    problem = seats_problem(spec, options, [(s.seat, s.team) for s in header.seats])
    if problem is not None:
        raise RecordError(f"{path}: header seats: {problem}")
    return spec.num_seats(options), spec.num_teams(options)


def read_record(path: Path) -> Record:
    """Read and validate a record.  A torn or missing tail marks it truncated, and
    a corrupt line marks it corrupt there, rather than failing; a file without a
    valid header, or whose header does not fit its game (``check_header``), is a
    ``RecordError``.  A line naming a seat the game does not have is a corrupt line."""
    path = Path(path)
    raw = read_input(path, "record", RecordError)
    lines = raw.split(b"\n")
    if not lines[0].strip():
        raise RecordError(f"{path}: empty file, not a match record")
    rec = Record(path=path, header=read_header(path, lines[0]))
    shape = check_header(path, rec.header)
    for i, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            entry = _LINE.validate_json(line)
            if isinstance(entry, HeaderLine):
                raise ValueError("a second header")
            if b"NaN" in line or b"Infinity" in line:  # _NONFINITE, spelt out: on every line
                _finite(entry.model_dump())
            if shape is not None and (problem := _entry_problem(entry, *shape)) is not None:
                raise ValueError(problem)
        except (ValidationError, ValueError) as exc:
            rec.truncated = True
            if i != len(lines):  # not merely a torn last line: a corrupt one
                rec.bad_line = i
                rec.bad_reason = (describe_validation_error(exc) if isinstance(exc, ValidationError)
                                  else str(exc))
            break
        if isinstance(entry, ResultLine):
            rec.result = entry
            break
        if isinstance(entry, _UnknownLine):
            continue
        rec.entries.append(entry)
        rec.line_numbers.append(i)
    if rec.result is None:
        rec.truncated = True
    return rec


def read_header(path: Path, line: bytes) -> HeaderLine:
    """The header from a record's first line (``path`` names it in errors); ``RecordError`` if it is not one."""
    try:
        header = _LINE.validate_json(line)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        if err["type"] in ("json_invalid", "not_a_record_line") or not err["loc"]:
            raise RecordError(f"{path}: not a match record (first line is not a record header)") from None
        if err["type"] == "missing" and len(err["loc"]) == 2:
            raise RecordError(f"{path}: header lacks {err['loc'][1]!r}") from None
        if err["loc"][:2] == ("header", "format"):
            fmt = err.get("input")
            raise RecordError(f"{path}: unsupported record format {fmt!r} (expected {RECORD_FORMAT})") from None
        if err["loc"][0] != "header":
            raise RecordError(f"{path}: not a match record (no header line)") from None
        raise RecordError(f"{path}: line 1: header {describe_validation_error(exc)}") from None
    if not isinstance(header, HeaderLine):
        raise RecordError(f"{path}: not a match record (no header line)")
    if any(token in line for token in _NONFINITE):
        try:
            _finite(header.model_dump())
        except ValueError as exc:
            raise RecordError(f"{path}: line 1: header {exc}") from None
    return header
