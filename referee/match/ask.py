"""Debugging a bot from its record: the exact lines a seat got, re-asking a decision, a what-if.

Nothing here is stored twice: the record's seed, options and recorded actions
rebuild the game through its engine (the one record walk, ``referee.match.walk``,
checks them against it as it goes), and every line a seat is sent comes from
the encoders the match runner uses (``hello_for``, ``codec.encode_request``,
``codec.encode_event``), so what is printed or fed to a bot is byte for byte
what the seat got in the recorded game.

* ``Replay(rec).lines_for(seat, n)``: the lines seat ``seat`` received up to
  and including request ``n`` (``referee replay --request``).
* ``ask(rec, n, bot, limits=...)``: plays the recorded game again with ``bot`` in the seat
  of request ``n`` and the other seats replaying their recorded replies; the
  bot gets the same hello, the same events and its earlier requests (its replies to those are
  read, one line each within the time limit, and ignored: the recorded action
  is applied), then request ``n``, whose reply is judged and returned.
* ``play_on(rec, n, bots, record_path)``: the what-if; every seat is a real
  bot fed the game as it went, the recorded actions are applied for the
  requests before ``n`` (the bots' own replies to them are ignored) and from
  ``n`` on the bots play; the new record is an ordinary record.

It all runs through ``runner.run_match``: the channels here only stand between
the runner and the bots (``channel_for``), so the conversation is the live one.

A record is data, never a launcher's settings.  What a bot is told about time
(its handshake, decision and time-bank limits, in ``hello`` and each request)
is the record's, checked to be in range: it is the game as it went.  Every
other limit and the sandbox are the operator's (``limits``: the command line's
flags and defaults); a seat's own limits in the header cannot turn the sandbox
off or lift a cap (``seat_limits``).  The commands the header names run only
when the caller passes them on (``recorded_bots``, behind ``--bots-from-record``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
from pydantic_core import to_json

from protocol.codec import encode_event, encode_request
from protocol.machine import Action, read_action
from protocol.machine import Fault as ProtocolFault
from referee.errors import UserFault
from referee.games import GameSpec
from referee.match.channel import BotChannel, BotFault
from referee.match.clock import TimeBank
from referee.match.record import DecisionLine, FaultLine, ReadyLine, Record, RecordError
from referee.match.runner import ChannelFactory, action_reader, hello_for, run_match
from referee.match.types import MAX_TIME_S, BotSpec, FaultReason, Limits, MatchResult
from referee.match.walk import STOP, RecordDiverged, Visitor, Walk

_DEFAULT_LIMITS = Limits()


class AskError(UserFault):
    """A request id that is not in the record, or a record that cannot be replayed: the user's input."""


@dataclass(frozen=True, slots=True)
class Request:
    """One request of the recorded game: ``action`` is None for the one that was refused."""

    n: int
    seat: int
    decision: str
    legal: list[str]
    action: str | None


@dataclass(frozen=True, slots=True)
class Line:
    kind: str  # "hello", "event" or "request"
    data: bytes  # the line as sent, newline included
    n: int | None = None  # the request id of a request line


class Replay:
    """A record's game, rebuilt through its engine (checked against the record as it goes)."""

    def __init__(self, rec: Record) -> None:
        self.rec = rec
        header = rec.header
        start = _walk(rec)  # the game's start as the walk rebuilds it (and its rules version checked)
        self.spec: GameSpec = start.spec
        self.options = start.options
        # The time each seat was told it had; nothing else of the recorded limits is taken.
        self.times = _recorded_times(rec.path, "limits", header.limits or {}, {})
        # A bot with limits of its own (a tournament entrant's) had them instead of the game's.
        self.seat_times = [_recorded_times(rec.path, f"seats.{i}.limits", s.limits, self.times)
                           if s.limits is not None else self.times for i, s in enumerate(header.seats)]
        self.limits = with_times(_DEFAULT_LIMITS, self.times)
        self.seat_limits = [with_times(_DEFAULT_LIMITS, t) for t in self.seat_times]
        ready = next((e for e in rec.entries if isinstance(e, ReadyLine)), None)
        self.wants_events = list(ready.events) if ready is not None else [True] * rec.seats
        self.ready_names = list(ready.names) if ready is not None else [s.name for s in header.seats]
        decisions = [e for e in rec.entries if isinstance(e, DecisionLine)]
        self.requests = [Request(d.n, d.seat, d.decision, list(d.legal), d.action) for d in decisions]
        fault = next((e for e in rec.entries if isinstance(e, FaultLine)), None)
        self.fault = fault
        if fault is not None and fault.request == len(decisions) + 1 and fault.legal is not None:
            self.requests.append(Request(fault.request, fault.seat, "", list(fault.legal), None))
        for i, r in enumerate(self.requests, start=1):
            if r.n != i:
                raise RecordError(f"{rec.path}: decision {i} of the record has request id {r.n}")

    def request(self, n: int) -> Request:
        """Request ``n`` of the record, or ``AskError`` saying which ids there are."""
        if not self.requests:
            if self.rec.bad_line is not None:
                raise AskError(f"{self.rec.path}: no request in this record before its corrupt line "
                               f"{self.rec.bad_line} ({self.rec.bad_reason})")
            raise AskError(f"{self.rec.path}: no request in this record (the game ended before the first one)")
        if not 1 <= n <= len(self.requests):
            raise AskError(f"request {n}: {self.rec.path} has requests 1 … {len(self.requests)}")
        return self.requests[n - 1]

    def lines_for(self, seat: int, until: int) -> list[Line]:
        """Every line ``seat`` received, from its hello to its request ``until`` (which must be its):
        the record walked (``referee.match.walk``) up to that request."""
        walk = _walk(self.rec)
        seen = _SeatLines(self, seat, until)
        try:
            stopped = not walk.run(self.rec, seen)
        except RecordDiverged as exc:
            raise RecordError(f"{self.rec.path}: {exc}; the lines of request {until} cannot be rebuilt") from None
        if not stopped:  # ``until`` is the request a bot refused (the fault line's), after the last decision
            r = self.requests[until - 1]
            state = walk.state
            acting, legal = state.to_act(), state.legal_actions()
            if r.action is not None or acting != r.seat or legal != r.legal:
                raise RecordError(f"{self.rec.path}: request {r.n} differs from the engine's (seat {acting}, "
                                  f"{len(legal)} legal actions); `referee replay --verify` says where")
            seen.request(walk, r.n)
        return seen.out


def _walk(rec: Record) -> Walk:
    """The start of ``rec``'s walk; ``RecordError`` naming the record if its game cannot be rebuilt."""
    try:
        return Walk.of(rec.header)
    except RecordDiverged as exc:
        raise RecordError(f"{rec.path}: {exc}") from None


class _SeatLines(Visitor):
    """The walk's visitor that collects what one seat was sent, up to its request ``until``."""

    def __init__(self, replay: Replay, seat: int, until: int) -> None:
        limits = replay.seat_limits
        self.seat, self.until = seat, until
        self.wants = replay.wants_events[seat]
        self.times = TimeBank([sl.decision_s for sl in limits], [sl.time_bank_s for sl in limits], replay.rec.seats)
        hello = hello_for(replay.spec, replay.options, seat, limits[seat])
        self.out = [Line("hello", hello.model_dump_json().encode() + b"\n")]

    def request(self, walk: Walk, n: int) -> None:
        """The engine's events since the last decision that the seat saw, then request ``n`` if it is the seat's."""
        seat, state = self.seat, walk.state
        if self.wants:
            self.out.extend(Line("event", encode_event(to_json(ev.data))) for ev in walk.events if ev.visible_to(seat))
        if state.to_act() == seat:
            self.out.append(Line("request", encode_request(n, seat, state.decision(), state.observe(seat),
                                                           state.legal_actions(),
                                                           int(self.times.allowed[seat] * 1000)), n))

    def decision(self, walk: Walk, line: int, entry: DecisionLine) -> bool | None:
        self.request(walk, entry.n)
        if entry.n == self.until:
            return STOP
        took = entry.ms / 1000
        if took > self.times.decision_s[entry.seat]:
            self.times.charge(entry.seat, took)
        return None


# ---------------------------------------------------------------------------
# The channels between the runner and the bots.

_REQUEST = b'{"type":"request","id":'


def _request_id(data: bytes) -> int | None:
    """The id of the request that ends ``data`` (the runner sends a request last), if one does."""
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    if not data.startswith(_REQUEST, start):
        return None
    end = data.index(b",", start + len(_REQUEST))
    return int(data[start + len(_REQUEST):end])


def _action_line(n: int, action: str) -> bytes:
    return json.dumps({"type": "action", "id": n, "action": action}).encode() + b"\n"


@dataclass
class _Plan:
    """What the channels share: the recorded actions, where the bots take over, where to stop."""

    actions: dict[int, str]
    take_over: int  # from this request on, the bots' replies count
    stop_after: int | None = None  # ask: end the game once a request after this one is due
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    async def check(self, data: bytes) -> int | None:
        rid = _request_id(data)
        if rid is not None and self.stop_after is not None and rid > self.stop_after:
            self.scope.cancel()
            await trio.lowlevel.checkpoint()  # raises Cancelled: the game goes no further
        return rid


class _Replaying(BotChannel):
    """A real bot whose replies to the requests before ``plan.take_over`` are read and
    ignored: the runner gets the recorded action instead.  From then on it is the bot."""

    def __init__(self, inner: BotChannel, plan: _Plan, capture: int | None = None) -> None:
        self.inner = inner
        self.seat = inner.seat
        self.log = inner.log
        self.plan = plan
        self.pending: int | None = None  # the request it is answering
        self.leftover = b""  # what it wrote after an ignored reply's line
        self.ignored: dict[int, bytes] = {}  # its replies that were replaced by the recorded ones
        self.capture = capture  # ask: the request whose reply is kept in ``reply``
        self.reply = b""

    @property  # read through to the bot's own
    def limit_fault(self) -> BotFault | None:  # type: ignore[override]
        return self.inner.limit_fault

    async def start(self, nursery: trio.Nursery) -> None:
        await self.inner.start(nursery)

    # What a long-lived process's channel knows (referee.match.pool), read through too.
    @property
    def reused(self) -> bool:  # type: ignore[override]
        return self.inner.reused

    @property
    def table(self) -> int:  # type: ignore[override]
        return self.inner.table

    @property
    def keep(self) -> bool:
        return self.inner.keep

    @keep.setter
    def keep(self, value: bool) -> None:
        self.inner.keep = value

    def adopt(self, ready: Any) -> None:
        self.inner.adopt(ready)

    async def replace(self, nursery: trio.Nursery) -> None:
        await self.inner.replace(nursery)

    @property
    def started(self) -> bool:
        return self.inner.started

    async def write(self, data: bytes) -> None:
        rid = await self.plan.check(data)
        if rid is not None:
            self.pending = rid
        await self.inner.write(data)

    async def receive_some(self) -> bytes:
        rid = self.pending
        if rid is not None and rid < self.plan.take_over:
            buf = self.leftover
            while b"\n" not in buf:
                data = await self.inner.receive_some()
                if not data:
                    self.leftover = b""
                    return b""
                buf += data
            line, _, self.leftover = buf.partition(b"\n")
            self.ignored[rid] = line
            self.pending = None
            return _action_line(rid, self.plan.actions[rid])
        if self.leftover:
            data, self.leftover = self.leftover, b""
        else:
            data = await self.inner.receive_some()
        if rid is not None and rid == self.capture:
            self.reply += data
        return data

    def receive_some_nowait(self) -> bytes | None:
        if self.leftover:
            data, self.leftover = self.leftover, b""
            return data
        return self.inner.receive_some_nowait()

    async def ended_fault(self) -> BotFault:
        return await self.inner.ended_fault()

    async def enforce_limits(self) -> BotFault | None:
        return await self.inner.enforce_limits()

    def closed_its_stdout(self) -> bool:
        return self.inner.closed_its_stdout()

    def stderr_tail(self) -> tuple[str, ...]:
        return self.inner.stderr_tail()

    async def wait_stderr_drained(self, timeout: float = 0.3) -> None:
        await self.inner.wait_stderr_drained(timeout)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Recorded(BotChannel):
    """A seat that is no process: it says ``ready`` as recorded and gives the recorded replies."""

    def __init__(self, seat: int, plan: _Plan, name: str, events: bool) -> None:
        from referee.logging import structlog

        self.seat = seat
        self.log = structlog.get_logger("referee.ask").bind(seat=seat)
        self.plan = plan
        self.ready = json.dumps({"type": "ready", "name": name, "events": events}).encode() + b"\n"
        self._started = False
        self._send, self._receive = trio.open_memory_channel[bytes](1 << 16)

    async def start(self, nursery: trio.Nursery) -> None:
        self._started = True

    @property
    def started(self) -> bool:
        return self._started

    async def write(self, data: bytes) -> None:
        if data.startswith(b'{"type":"hello"'):
            self._send.send_nowait(self.ready)
        elif (rid := await self.plan.check(data)) is not None:
            self._send.send_nowait(_action_line(rid, self.plan.actions[rid]))

    async def receive_some(self) -> bytes:
        return await self._receive.receive()

    def receive_some_nowait(self) -> bytes | None:
        try:
            return self._receive.receive_nowait()
        except trio.WouldBlock:
            return None

    async def ended_fault(self) -> BotFault:  # a recorded seat never ends: the game does
        return BotFault(FaultReason.EXITED, "the recorded seat ended")

    async def aclose(self) -> None:
        self._send.close()


# ---------------------------------------------------------------------------
# ask and play_on


@dataclass(frozen=True)
class Answer:
    """What the re-asked bot did at request ``request``."""

    request: Request
    reply: bytes | None  # its reply line (without the newline), None if no complete line came
    legal: bool
    reason: str | None  # None when legal; else a FaultReason value (invalid_action, illegal_action, timeout, ...)
    message: str
    earlier: int  # requests of its seat before this one (fed, replies ignored)
    differed: list[int]  # the earlier requests where its reply was not the recorded action
    stderr_tail: tuple[str, ...] = ()


#: The limits a record says each seat was told (``hello``'s ``limits``); the rest are the operator's.
TIME_FIELDS = ("handshake_s", "decision_s", "time_bank_s")


def _recorded_times(path: Path, where: str, data: object, base: dict[str, float]) -> dict[str, float]:
    """The time limits of a record's ``limits`` object (``base``'s where it has none), each a finite
    number of seconds within ``MAX_TIME_S`` (``time_bank_s`` may be 0), or ``RecordError``."""
    if not isinstance(data, dict):
        raise RecordError(f"{path}: header {where}: not an object")
    out = {k: base.get(k, getattr(_DEFAULT_LIMITS, k)) for k in TIME_FIELDS}
    for key in TIME_FIELDS:
        if key not in data:
            continue
        value = data[key]
        low_ok = (lambda v: v >= 0) if key == "time_bank_s" else (lambda v: v > 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and low_ok(value) and value <= MAX_TIME_S):
            shown = repr(value) if len(repr(value)) <= 24 else repr(value)[:20] + "…"
            raise RecordError(f"{path}: header {where}.{key}: {shown} is not a time limit "
                              f"(seconds, {'0' if key == 'time_bank_s' else 'more than 0'} to {MAX_TIME_S:g})")
        out[key] = float(value)
    return out


def seat_limits(replay: Replay, seat: int, operator: Limits) -> Limits:
    """The limits seat ``seat``'s bot runs under: the operator's (sandbox, memory, processes, ...)
    with the time the record says that seat was told.  Nothing in the record can lift a cap."""
    return with_times(operator, replay.seat_times[seat])


def with_times(limits: Limits, times: dict[str, float]) -> Limits:
    """``limits`` with the time limits ``times`` (``TIME_FIELDS``)."""
    return dataclasses.replace(limits, handshake_s=times["handshake_s"], decision_s=times["decision_s"],
                               time_bank_s=times["time_bank_s"])


async def ask(rec: Record, n: int, bot: BotSpec, *, limits: Limits, stderr_dir: Path | None = None) -> Answer:
    """Re-ask request ``n`` of ``rec`` to ``bot`` (see the module's docstring)."""
    replay = Replay(rec)
    req = replay.request(n)
    seat = req.seat
    plan = _Plan({r.n: r.action for r in replay.requests if r.action is not None}, take_over=n, stop_after=n)
    asked: list[_Replaying] = []

    def channel_for(s: int, spec: BotSpec, default: ChannelFactory) -> BotChannel:
        if s != seat:
            return _Recorded(s, plan, replay.ready_names[s], replay.wants_events[s])
        asked.append(_Replaying(default(s, spec), plan, capture=n))
        return asked[0]

    # The other seats are no processes (``_Recorded``): their commands are names only here.
    seats = [dataclasses.replace(b, limits=seat_limits(replay, s, limits)) for s, b in enumerate(recorded_bots(rec))]
    seats[seat] = dataclasses.replace(bot, limits=seat_limits(replay, seat, limits))
    result: MatchResult | None = None
    with plan.scope:
        result = await run_match(replay.spec.name, replay.options, seats, seed=rec.header.seed,
                                 limits=with_times(limits, replay.times), stderr_dir=stderr_dir,
                                 channel_for=channel_for)
    channel = asked[0]
    earlier = [r.n for r in replay.requests[: n - 1] if r.seat == seat]
    differed = [k for k, line in sorted(channel.ignored.items())
                if not isinstance(read_action(line, k, [plan.actions[k]]), Action)]
    tail = channel.stderr_tail()
    fault = result.fault if result is not None else None
    if b"\n" in channel.reply:
        line = channel.reply.partition(b"\n")[0]
        verdict = read_action(line, n, req.legal, action_reader(replay.spec))
        if isinstance(verdict, ProtocolFault):
            return Answer(req, line, False, verdict.kind, verdict.detail, len(earlier), differed, tail)
        return Answer(req, line, True, None, f"{verdict.action!r} is legal", len(earlier), differed, tail)
    if fault is not None and fault.seat == seat:
        where = ""
        if fault.request != n:
            where = f" before request {n}" + (f" (at request {fault.request})" if fault.request is not None else "")
        return Answer(req, None, False, fault.reason.value, fault.message + where, len(earlier), differed, tail)
    raise AssertionError(f"the re-asked bot neither replied to request {n} nor faulted")  # pragma: no cover


async def play_on(rec: Record, n: int, bots: list[BotSpec], record_path: Path, *, limits: Limits,
                  stderr_dir: Path | None = None) -> MatchResult:
    """The what-if: the recorded actions before request ``n``, then ``bots`` play (module docstring)."""
    replay = Replay(rec)
    decided = sum(r.action is not None for r in replay.requests)
    ended = rec.result is not None and rec.result.outcome.status != "forfeit"  # no request after the last
    last = decided if ended else decided + 1
    if not 1 <= n <= last:
        raise AskError(f"request {n}: the bots can take over at requests 1 … {last} of {rec.path}")
    if len(bots) != rec.seats:
        raise AskError(f"{replay.spec.name} needs {rec.seats} bots, got {len(bots)}")
    plan = _Plan({r.n: r.action for r in replay.requests if r.action is not None}, take_over=n)
    bots = [dataclasses.replace(b, limits=seat_limits(replay, s, limits)) for s, b in enumerate(bots)]

    def channel_for(s: int, spec: BotSpec, default: ChannelFactory) -> BotChannel:
        return _Replaying(default(s, spec), plan)

    return await run_match(replay.spec.name, replay.options, bots, seed=rec.header.seed, record_path=record_path,
                           limits=with_times(limits, replay.times), stderr_dir=stderr_dir,
                           channel_for=channel_for)


def recorded_bots(rec: Record) -> list[BotSpec]:
    """The bots of the recorded game as its header names them: name, command and folder only
    (the header's limits are not a launcher's: ``seat_limits``).  Run them only when the user
    asked for exactly that (``referee ask --from --bots-from-record``), after showing them."""
    return [BotSpec(name=s.name, command=tuple(s.command), cwd=s.cwd, named=s.named) for s in rec.header.seats]


def describe_recorded(replay: Replay, req: Request) -> str:
    """What the recorded bot did at ``req``: its action, or its fault and output."""
    if req.action is not None:
        return f"played {req.action!r}"
    f = replay.fault
    assert f is not None
    shown = f"; its output: {f.output}" if f.output is not None else ""
    return f"forfeited: {f.reason}: {f.message}{shown}"


__all__ = ["TIME_FIELDS", "Answer", "AskError", "Line", "Replay", "Request", "ask", "describe_recorded", "play_on",
           "recorded_bots", "seat_limits"]
