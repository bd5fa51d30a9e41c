"""Play one game between bot processes: the one place faults become results.

The runner moves values between a pure engine and the bots' channels.  Per
decision it asks the engine who acts, what is legal and what that seat sees,
sends one request, reads the reply under the time limit, applies it, then
forwards the resulting events to the seats that may see them and appends
them to the record.  Which message may come when, and what a line means, is
each seat's ``protocol.machine.Conversation``'s to say; how long a seat may
think is ``clock.TimeBank``'s; the bots are ``BotChannel``s (real processes,
or in tests in-memory fakes).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import trio
from pydantic_core import from_json, to_json

from protocol import HelloMsg
from protocol.codec import encode_event
from protocol.machine import NEED_DATA, Action, Bye, Conversation, PartialLine, Ready
from protocol.machine import Fault as ProtocolFault
from protocol.messages import TimeLimits
from referee.errors import RefereeBug
from referee.games import Event, GameSpec, InvalidAction, Outcome, get_game
from referee.logging import ensure_configured, structlog
from referee.match import bubblewrap
from referee.match.bot import BotProcess
from referee.match.channel import BotChannel, BotFault
from referee.match.clock import TimeBank
from referee.match.pool import ProcessPool
from referee.match.record import RECORD_FORMAT, RecordWriter, decision_entry_bytes, event_entry_bytes
from referee.match.types import BotSpec, Fault, FaultReason, Limits, MatchResult, display_name, escape_output

log = structlog.get_logger("referee.match")

# How far past a decision's time limit the runner's deadline may lie (see ``_play``).
DEADLINE_SLACK_S = 0.002

# Makes the channel of each seat; run_match's default starts a BotProcess (tests pass fakes).
ChannelFactory = Callable[[int, BotSpec], BotChannel]
# Makes a seat's channel given the default factory (``referee.match.ask`` wraps or replaces it).
ChannelHook = Callable[[int, BotSpec, ChannelFactory], BotChannel]


def protocol_fault(event: ProtocolFault) -> BotFault:
    """A protocol fault as the referee names it (the machine's kinds are FaultReason codes)."""
    return BotFault(FaultReason(event.kind), event.detail, event.line)


def action_reader(spec: GameSpec) -> Callable[[str], bool]:
    """Whether a text is an action of the game at all (``invalid_action`` if not): its notation says."""
    parse = spec.action_type.from_text

    def is_action(text: str) -> bool:
        try:
            parse(text)
        except InvalidAction:
            return False
        return True

    return is_action


def game_teams(spec: GameSpec, options: dict) -> list[list[int]]:
    """The seats of each team, by team number."""
    seats = spec.num_seats(options)
    return [[s for s in range(seats) if spec.team_of(s, options) == t] for t in range(spec.num_teams(options))]


def hello_for(spec: GameSpec, options: dict, seat: int, limits: Limits, *, table: int = 0,
              handshake_s: float | None = None) -> HelloMsg:
    """The ``hello`` a seat gets: one definition for a game and for ``referee.match.ask``.
    ``handshake_s``: the time to ``ready`` when not the start-up limit (a reused process's)."""
    handshake = limits.handshake_s if handshake_s is None else handshake_s
    return HelloMsg(
        game=spec.name, rules_version=spec.rules_version, options=options, table=table,
        seat=seat, team=spec.team_of(seat, options), seats=spec.num_seats(options),
        teams=game_teams(spec, options),
        limits=TimeLimits(handshake_ms=int(handshake * 1000), decision_ms=int(limits.decision_s * 1000),
                          time_bank_ms=int(limits.time_bank_s * 1000)),
    )


def game_position(observation: dict[str, Any]) -> dict[str, int]:
    """Where a game is, from a seat's observation: ``{"deal": n}`` in the card games,
    ``{"turn": n}`` in Pegs and Jokers (empty if neither is there)."""
    for key in ("deal", "turn"):
        value = observation.get(key)
        if type(value) is int:
            return {key: value}
    return {}


RECORD_FLUSH_S = 0.1  # the record on disk is at most this far behind the game


class RefereeError(RefereeBug):
    """Our own bug or an unusable setting: never a bot's fault."""


def result_for_team(outcome: Outcome, team: int) -> str:
    if outcome.status == "aborted":
        return "aborted"
    if outcome.status == "draw":
        return "draw"
    return "win" if team in outcome.winners else "loss"


class PublicEntries(Sequence[dict[str, Any]]):
    """A game's public record entries (``MatchResult.entries``, for the score table):
    its public events, kept as their JSON and made dicts only when first read, as
    a record's reader makes them.  Kept as dicts during the game, several per
    decision outlived it, which made Python's cyclic garbage collector run over
    the whole heap every few hundred decisions (with the C random bots, about 1 us
    per decision in Schmier and 16 us in Back Alley, measured with ``gc.callbacks``);
    bytes are not the collector's to scan, and a tournament never reads them."""

    __slots__ = ("_encoded", "_decoded")

    def __init__(self, encoded: list[bytes]) -> None:
        self._encoded = encoded
        self._decoded: list[dict[str, Any]] | None = None

    def _entries(self) -> list[dict[str, Any]]:
        if self._decoded is None:
            self._decoded = [{"record": "event", "event": from_json(e), "to": None} for e in self._encoded]
        return self._decoded

    def __len__(self) -> int:
        return len(self._encoded)

    def __getitem__(self, index):  # an int or a slice, as a list's
        return self._entries()[index]

    def __iter__(self):
        return iter(self._entries())

    def __eq__(self, other: object) -> bool:
        return list(self) == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def __repr__(self) -> str:
        return f"PublicEntries({len(self)} events)"


class _Match:
    def __init__(self, game: str, options: dict, bots: Sequence[BotSpec], seed: int,
                 record_path: Path | None, limits: Limits, stderr_dir: Path | None,
                 hide: Sequence[Path] = (), channels: ChannelFactory | None = None,
                 channel_for: ChannelHook | None = None, pool: ProcessPool | None = None) -> None:
        self.spec = get_game(game)
        self.options = self.spec.normalize_options(options or {})
        self.num_seats = self.spec.num_seats(self.options)
        self.num_teams = self.spec.num_teams(self.options)
        if len(bots) != self.num_seats:
            raise RefereeError(f"{self.spec.name} needs {self.num_seats} bots (one per seat), got {len(bots)}")
        self.bots = list(bots)
        self.seed = seed
        self.limits = limits
        self.record_path = Path(record_path) if record_path is not None else None
        self.stderr_dir = Path(stderr_dir) if stderr_dir is not None else None
        # Each seat's limits: its bot's own (a tournament entrant's), else the match's.
        self.seat_limits = [b.limits or limits for b in self.bots]
        # SandboxUnavailable: the user's to fix.  The match is "bwrap" only if every seat is.
        self.seat_sandbox = [bubblewrap.effective_mode(sl.sandbox) for sl in self.seat_limits]
        self.sandbox = next((m for m in self.seat_sandbox if m != "bwrap"), "bwrap")
        # What a sandboxed bot must not see even where it lies inside a folder it may read.
        self.hide = tuple(str(p) for p in (*hide, *(x for x in (self.record_path, self.stderr_dir) if x)))
        self.writer: RecordWriter | None = None
        self.public: list[bytes] = []  # the JSON of each public event, for the score table (``PublicEntries``)
        self.decisions = 0
        self.took_total = [0.0] * len(self.bots)  # per seat: seconds its replies took, and the longest
        self.took_max = [0.0] * len(self.bots)
        self.took_count = [0] * len(self.bots)
        self.times = TimeBank([sl.decision_s for sl in self.seat_limits],
                              [sl.time_bank_s for sl in self.seat_limits], self.num_seats)
        self.wants_events = [True] * self.num_seats  # set from each bot's `ready`
        self.any_wants_events = True
        self.names = [b.name for b in self.bots]  # the names the bots give in `ready`
        # Record lines not yet written: a decision line (bytes), or (event, its JSON or None).
        self._backlog: list[bytes | tuple[Event, bytes | None]] = []
        self.log = log.bind(game=self.spec.name, seed=seed)
        self.channels = channels
        self.channel_for = channel_for
        self.pool = pool
        # Processes may serve this game after others (referee.match.pool) only if the sandbox
        # they were started in hides this game's files too: those lie in a path hidden for all.
        given = tuple(Path(p) for p in hide)
        covered = all(any(x.is_relative_to(h) for h in given) for x in (self.record_path, self.stderr_dir) if x)
        self.reuse_hidden = given if covered else None

    # -- record --------------------------------------------------------------

    def header(self) -> dict[str, Any]:
        return {
            "record": "header",
            "format": RECORD_FORMAT,
            "game": self.spec.name,
            "rules_version": self.spec.rules_version,
            "options": self.options,
            "seed": self.seed,
            "seats": [
                {"seat": s, "team": self.spec.team_of(s, self.options), **b.to_json()}
                for s, b in enumerate(self.bots)
            ],
            "limits": self.limits.to_json(),
            "sandbox": self.sandbox,
            "started_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        }

    def _write(self, entry: dict[str, Any]) -> None:
        if self.writer is not None:
            self.writer.write(entry)

    # -- events --------------------------------------------------------------

    def _route_events(self, events: list[Event], outbox: list[list[bytes]]) -> None:
        """Queue each event for the seats that asked for events and may see it; its
        record line waits in the backlog (``_write_backlog``).  Encoded once."""
        wants = self.wants_events
        any_wants = self.any_wants_events
        backlog = self._backlog
        for ev in events:
            ev_json = None
            if any_wants:
                seats = range(self.num_seats) if ev.to is None else ev.to
                if any(wants[s] for s in seats):
                    ev_json = to_json(ev.data)
                    line = encode_event(ev_json)
                    for s in seats:
                        if wants[s]:
                            outbox[s].append(line)
            backlog.append((ev, ev_json))

    def _write_backlog(self) -> None:
        """Record what the last decision caused.  Off the per-decision path: the
        runner calls this once the next request is on its way, so the record is
        written while the next bot thinks, in the same order as it happened.
        One write call for the lot."""
        backlog, writer, public = self._backlog, self.writer, self.public
        lines: list[bytes] = []
        for item in backlog:
            if isinstance(item, bytes):  # a decision's line: only ever queued when there is a record
                lines.append(item)
                continue
            ev, ev_json = item
            if ev_json is None and (writer is not None or ev.to is None):
                ev_json = to_json(ev.data)
            if writer is not None:
                lines.append(event_entry_bytes(ev_json, ev.to))  # type: ignore[arg-type]
            if ev.to is None:
                public.append(ev_json)  # type: ignore[arg-type]
        if lines:
            writer.write_raw(b"".join(lines))  # type: ignore[union-attr]
        backlog.clear()

    # -- the game --------------------------------------------------------------

    async def run(self) -> MatchResult:
        started = time.perf_counter()
        if self.record_path is not None:
            self.record_path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = RecordWriter(self.record_path)
        if self.stderr_dir is not None:
            self.stderr_dir.mkdir(parents=True, exist_ok=True)
        self._write(self.header())
        if self.writer is not None:
            self.writer.flush()  # a referee killed before the first decision still leaves a readable record
        state, events = self.spec.new_game(self.seed, self.options)
        procs: list[BotChannel] = []
        is_action = action_reader(self.spec)
        convs = [Conversation(sl.max_line_bytes, is_action) for sl in self.seat_limits]
        fault: tuple[int, BotFault] | None = None
        outcome: Outcome | None = None
        try:
            async with trio.open_nursery() as nursery:
                if self.channels is not None:
                    base: ChannelFactory = self.channels
                else:  # without a pool of its own (``referee play``), every process plays this game only
                    pool = self.pool or ProcessPool(nursery, reuse=False)
                    base = functools.partial(self._lease, pool)
                hook = self.channel_for
                procs += [hook(s, b, base) if hook is not None else base(s, b) for s, b in enumerate(self.bots)]
                if self.writer is not None:
                    nursery.start_soon(self._flush_record_every, RECORD_FLUSH_S)
                try:
                    fault = await self._handshake(procs, convs, nursery)
                    if fault is None:
                        fault, state = await self._play(procs, convs, state, events)
                    else:  # the engine dealt before the handshake failed: record it, send it nowhere
                        self._route_events(events, [[] for _ in range(self.num_seats)])
                        self._write_backlog()
                    if fault is None:
                        outcome = state.outcome()
                        assert outcome is not None
                    else:
                        outcome = self._forfeit_outcome(fault[0], fault[1])
                    told = await self._say_game_over(procs, convs, outcome)
                    for s in told:  # the game ended well for these seats: their processes may play on
                        if fault is None or s != fault[0]:
                            procs[s].keep = True
                finally:
                    with trio.CancelScope(shield=True):
                        async with trio.open_nursery() as closer:
                            for p in procs:
                                closer.start_soon(p.aclose)
                        for p in procs:
                            await p.wait_stderr_drained(0.2)
                nursery.cancel_scope.cancel()  # stderr pumps held open by stray children
            fault_value = None
            if fault is not None:
                seat, exc = fault
                fault_value = Fault(seat, exc.reason, exc.message, procs[seat].stderr_tail(),
                                    **self._fault_context(state, convs[seat], seat, exc))
                self._write({"record": "fault", **fault_value.to_json()})
            duration = time.perf_counter() - started
            self._write({
                "record": "result",
                "outcome": outcome.to_json(),
                "decisions": self.decisions,
                "duration_s": round(duration, 3),
                "names": self.names,
            })
        finally:
            if self.writer is not None:
                self.writer.close()
        self.log.info(
            "game_finished",
            status=outcome.status,
            winners=list(outcome.winners),
            scores=list(outcome.scores),
            decisions=self.decisions,
            seconds=round(duration, 3),
            fault=fault_value.reason.value if fault_value else None,
            fault_seat=fault_value.seat if fault_value else None,
        )
        return MatchResult(
            game=self.spec.name, seed=self.seed, options=self.options, seats=self.bots,
            outcome=outcome, fault=fault_value, decisions=self.decisions, duration_s=duration,
            record_path=self.record_path, entries=PublicEntries(self.public), sandbox=self.sandbox,
            names=list(self.names),
            decision_ms=[(c, round(t * 1000, 3), round(m * 1000, 3))
                         for c, t, m in zip(self.took_count, self.took_total, self.took_max, strict=True)],
        )

    async def _flush_record_every(self, period: float) -> None:
        """Push the record's buffered lines to the file every ``period`` seconds:
        a killed referee, or someone reading the record of a game that is stuck
        on a slow bot, misses at most that much.  (A flush per decision cost a
        system call on every decision.)"""
        writer = self.writer
        assert writer is not None
        while True:
            await trio.sleep(period)
            writer.flush()

    def _fault_context(self, state: Any, conv: Conversation, seat: int, exc: BotFault) -> dict[str, Any]:
        """What the record keeps of a fault besides its reason (fault path only): the
        request it refused and its legal list, if one of its was pending; the offending
        output; where in the game it was."""
        out: dict[str, Any] = {}
        if exc.output is not None:
            out["output"] = escape_output(exc.output)
            out["output_bytes"] = len(exc.output)
        if self.decisions:  # past the handshake
            if state.to_act() == seat and conv.request_id == self.decisions:
                out["request"] = self.decisions
                out["legal"] = tuple(conv.request_legal)
            out.update(game_position(state.observe(seat)))
        return out

    def _bot_process(self, seat: int, bot: BotSpec) -> BotProcess:
        return BotProcess(seat, bot, self.seat_limits[seat], self._stderr_path(seat, bot), self._jail(seat, bot),
                          log=self.log)

    def _lease(self, pool: ProcessPool, seat: int, bot: BotSpec) -> BotChannel:
        hidden = self.reuse_hidden
        key = (bot, self.seat_limits[seat], self.seat_sandbox[seat], hidden) if hidden is not None else None
        return pool.lease(seat, lambda: self._bot_process(seat, bot), name=bot.name, key=key, seed=self.seed,
                          stderr_path=self._stderr_path(seat, bot), log=self.log)

    def _jail(self, seat: int, bot: BotSpec) -> bubblewrap.Jail | None:
        if self.seat_sandbox[seat] != "bwrap":
            return None
        return bubblewrap.Jail(network=bot.network, ro_paths=bot.ro_paths, own_dir=bot.own_dir,
                               hide=self.hide, scratch_mb=self.seat_limits[seat].scratch_mb)

    def _stderr_path(self, seat: int, bot: BotSpec) -> Path | None:
        if self.stderr_dir is None:
            return None
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in bot.name)[:60]
        return self.stderr_dir / f"seat{seat}-{safe}.log"

    def _forfeit_outcome(self, seat: int, exc: BotFault) -> Outcome:
        team = self.spec.team_of(seat, self.options)
        return Outcome(
            status="forfeit",
            winners=tuple(t for t in range(self.num_teams) if t != team),
            scores=tuple(0 for _ in range(self.num_teams)),
            reason=exc.reason.value,
            detail={"seat": seat, "team": team, "message": exc.message},
        )

    async def _handshake(self, procs: list[BotChannel], convs: list[Conversation],
                         nursery: trio.Nursery) -> tuple[int, BotFault] | None:
        faults: dict[int, BotFault] = {}

        async def one(seat: int) -> None:
            p = procs[seat]
            own = self.seat_limits[seat]
            try:
                await p.start(nursery)
                while True:
                    # A process that played before (a long-lived bot) is ready at once: its limit is decision_s.
                    limit = own.decision_s if p.reused else own.handshake_s
                    conv = convs[seat]
                    hello = hello_for(self.spec, self.options, seat, own, table=p.table, handshake_s=limit)
                    await p.send(conv.send_hello(hello), limit)
                    with trio.move_on_after(limit) as scope:
                        event = await self._next_event(p, conv)
                    if scope.cancelled_caught:
                        if (over := await p.enforce_limits()) is not None:
                            raise over
                        raise BotFault(FaultReason.HANDSHAKE_TIMEOUT, f"no ready within {limit:g}s")
                    if type(event) is not Bye:
                        break
                    await p.replace(nursery)  # it plays no more games: this one goes to a fresh process
                    convs[seat] = Conversation(own.max_line_bytes, action_reader(self.spec))
                if type(event) is not Ready:
                    raise await self._fault_from(p, event)
                p.adopt(event)
                self.wants_events[seat] = event.events
                bot = self.bots[seat]
                self.names[seat] = bot.name if bot.named else display_name(event.name, bot.name)
            except BotFault as exc:
                faults[seat] = exc

        async with trio.open_nursery() as hs:
            for seat in range(len(procs)):
                hs.start_soon(one, seat)
        if faults:
            seat = min(faults)
            return seat, faults[seat]
        self.any_wants_events = any(self.wants_events)
        self._write({"record": "ready", "names": self.names, "events": self.wants_events})
        return None

    @staticmethod
    async def _next_event(p: BotChannel, conv: Conversation):
        """Read until the conversation has something to say (off the per-decision path)."""
        while (event := conv.next_event()) is NEED_DATA:
            conv.receive_data(await p.receive_some())
        return event

    @staticmethod
    async def _fault_from(p: BotChannel, event: Any) -> BotFault:
        """The fault of a bot whose next event was not the message due: a protocol
        fault, or the end of its output (explained by the channel: a cap, an exit,
        a closed stdout; a partial line is named unless a cap explains it)."""
        if type(event) is ProtocolFault:
            return protocol_fault(event)
        ended = await p.ended_fault()
        if type(event) is PartialLine and ended.reason in (FaultReason.EXITED, FaultReason.CLOSED_STDOUT):
            return BotFault(FaultReason.PARTIAL_LINE, f"a partial line without a newline arrived "
                                                      f"({event.size} bytes), then it {ended.message}", event.line)
        return ended

    def _take_outbox(self, seat: int, lines: list[bytes]) -> bytes:
        payload = b"".join(lines) if (lines and self.wants_events[seat]) else b""
        lines.clear()
        return payload

    async def _flush(self, procs: list[BotChannel], outbox: list[list[bytes]]) -> None:
        """Send queued events to every seat that wants them (one write per seat)."""
        for s, lines in enumerate(outbox):
            if not lines:
                continue
            payload = self._take_outbox(s, lines)
            if payload:
                try:
                    await procs[s].send(payload, self.times.allowed[s])
                except BotFault as exc:
                    raise _SeatFault(s, exc) from None

    async def _play(self, procs: list[BotChannel], convs: list[Conversation], state, events: list[Event]):
        """The decision loop; returns (fault or None, final state).

        Between a reply and the next request it does only what the next request
        needs (apply, legal list, observation, encoding); the record lines of
        the decision just made are written after that request is sent, while
        the bot thinks."""
        outbox: list[list[bytes]] = [[] for _ in range(self.num_seats)]
        self._route_events(events, outbox)
        times = self.times
        decision_s = times.decision_s  # per seat
        backlog = self._backlog
        writer = self.writer
        seat, rid, allowed, sent = -1, 0, 0.0, False
        conv: Conversation | None = None
        now = trio.lowlevel.current_clock().current_time  # trio.current_time() without its three layers
        took_total, took_count, took_max = self.took_total, self.took_count, self.took_max
        # Where each seat's limit_fault lives (its process): read on every decision, so without layers.
        holders = [(p.seat, p.fault_holder()) for p in procs]
        # One cancel scope for the whole game: creating a scope per round trip
        # costs Trio more than the rest of the referee's per-decision work, and so
        # does moving its deadline twice per decision.  So the deadline moves only
        # when it is not already within DEADLINE_SLACK_S after this decision's
        # limit (about once in ten decisions), and a reply that comes after the
        # limit but before the scope fires is late all the same (``times.charge``).
        # Whatever waits for something else than the acting bot's reply first
        # lifts the deadline (``inf``).
        with trio.CancelScope() as clock:
            try:
                while (seat := state.to_act()) is not None:
                    p, conv = procs[seat], convs[seat]
                    legal = state.legal_actions()
                    legal_json = to_json(legal)  # encoded once: for the request and for the record
                    decision = state.decision()
                    self.decisions += 1
                    rid = self.decisions
                    allowed = times.allowed[seat]
                    observation = state.observe(seat)
                    for holder_seat, holder in holders:  # the watchdog may have killed any bot, acting or not
                        if holder.limit_fault is not None:
                            raise _SeatFault(holder_seat, holder.limit_fault)
                    # Output since its last reply (or its end) stops the request: the conversation says.
                    if (early := p.receive_some_nowait()) is not None:
                        conv.receive_data(early)
                    request = conv.send_request(rid, seat, decision, observation, legal, int(allowed * 1000),
                                                legal_json)
                    if type(request) is not bytes:
                        clock.deadline = math.inf
                        raise _SeatFault(seat, await self._fault_from(p, request))
                    queued = outbox[seat]
                    payload = self._take_outbox(seat, queued) + request if queued else request
                    if any(outbox):  # events for seats that asked for them
                        clock.deadline = math.inf  # their sends have limits of their own
                        await self._flush(procs, outbox)
                    t0 = now()
                    sent = False
                    due = t0 + allowed
                    if not due <= clock.deadline <= due + DEADLINE_SLACK_S:
                        clock.deadline = due + DEADLINE_SLACK_S
                    try:
                        await p.write(payload)
                        sent = True
                        if backlog:  # the previous decision's record lines, while this bot thinks
                            self._write_backlog()
                        event = conv.receive_reply(await p.receive_some())
                        while event is NEED_DATA:
                            event = conv.receive_reply(await p.receive_some())
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        clock.deadline = math.inf
                        raise _SeatFault(seat, await p.ended_fault()) from None
                    took = now() - t0
                    if took > decision_s[seat] and not times.charge(seat, took):
                        raise _Late  # answered within the slack, not within the limit
                    if type(event) is not Action:
                        clock.deadline = math.inf
                        raise _SeatFault(seat, await self._fault_from(p, event))
                    action = event.action
                    took_total[seat] += took
                    took_count[seat] += 1
                    if took > took_max[seat]:
                        took_max[seat] = took
                    if writer is not None:
                        backlog.append(decision_entry_bytes(rid, seat, decision, legal_json, action,
                                                            round(took * 1000, 3)))
                    self._route_events(state.apply(action), outbox)
                clock.deadline = math.inf
                await self._flush(procs, outbox)
                return None, state
            except _SeatFault as sf:
                return (sf.seat, sf.fault), state
            except _Late:
                pass
            finally:  # whatever ended the loop, what happened before it is recorded
                self._write_backlog()
        # The acting seat's deadline passed (the scope fired, or the reply came too late).
        assert conv is not None
        return (seat, await self._late_fault(procs[seat], conv, rid, allowed, sent)), state

    @staticmethod
    async def _late_fault(p: BotChannel, conv: Conversation, rid: int, allowed: float, sent: bool) -> BotFault:
        # A bot over a process or memory cap is usually too busy to answer: name the cap.
        if (over := await p.enforce_limits()) is not None:
            return over
        if not sent:
            return BotFault(FaultReason.NOT_READING, f"stdin stayed full for {allowed:.3f}s")
        if p.closed_its_stdout():
            return BotFault(FaultReason.CLOSED_STDOUT, "closed its stdout but kept running")
        if conv.pending_bytes:  # it wrote its reply but not the newline: a timeout would mislead
            return BotFault(FaultReason.PARTIAL_LINE, f"a partial line without a newline arrived "
                                                      f"({conv.pending_bytes} bytes); no newline followed within "
                                                      f"{allowed:.3f}s of request {rid}", conv.pending_line)
        return BotFault(FaultReason.TIMEOUT, f"no reply to request {rid} within {allowed:.3f}s")

    async def _say_game_over(self, procs: list[BotChannel], convs: list[Conversation], outcome: Outcome) -> list[int]:
        """Send ``game_over`` to every seat that was started; the seats that got it."""
        told = []
        for seat, (p, conv) in enumerate(zip(procs, convs, strict=True)):
            if not p.started:
                continue
            team = self.spec.team_of(seat, self.options)
            with contextlib.suppress(BotFault):  # the game is over; a bot that cannot hear it changes nothing
                await p.send(conv.send_game_over(outcome.to_json(), result_for_team(outcome, team)), 0.2)
                told.append(seat)
        return told


class _Late(Exception):
    """The acting seat's reply came after its time limit (within the deadline's slack)."""


class _SeatFault(Exception):
    def __init__(self, seat: int, fault: BotFault) -> None:
        self.seat = seat
        self.fault = fault


async def run_match(
    game: str,
    options: dict | None,
    bots: Sequence[BotSpec],
    *,
    seed: int,
    record_path: Path | None = None,
    limits: Limits = Limits(),
    stderr_dir: Path | None = None,
    hide: Sequence[Path] = (),
    channel_for: ChannelHook | None = None,
    pool: ProcessPool | None = None,
    _channels: ChannelFactory | None = None,
) -> MatchResult:
    """Play one game.  Bot faults become a ``forfeit`` outcome, never an exception.

    ``limits`` apply to every bot without limits of its own (``BotSpec.limits``,
    a tournament entrant's: then that bot is timed, capped and sandboxed by its own).

    ``hide``: paths a sandboxed bot must not see even inside a folder it may
    read (a tournament's output folder and file); the record and the stderr
    folder are always hidden.  ``channel_for(seat, bot, default)`` makes a seat's
    channel given the default factory (``referee.match.ask`` replays recorded
    decisions through it).  ``pool``: live processes to play with and to
    keep for later games (``referee.match.pool``: long-lived bots); without
    one, every process plays this game only.  ``_channels`` (internal, for
    tests) makes each seat's channel instead of starting a bot process."""
    ensure_configured()
    match = _Match(game, options or {}, bots, seed, record_path, limits, stderr_dir, hide, _channels, channel_for,
                   pool)
    return await match.run()
