"""Play one game between bot processes: the one place faults become results.

The runner moves values between a pure engine and the bots' pipes.  Per
decision it asks the engine who acts, what is legal and what that seat sees,
sends one request line, reads one reply line under the time limit, checks it
and applies it, then forwards the resulting events to the seats that may see
them and appends them to the record.
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog
import trio
from pydantic_core import to_json

from protocol import GameOverMsg, HelloMsg
from protocol.codec import Violation, decode_bot_line, decode_plain_action, encode, encode_request
from protocol.messages import ActionMsg, ReadyMsg, TimeLimits
from referee.errors import RefereeBug
from referee.games import Event, Outcome, get_game
from referee.logging import ensure_configured
from referee.match import bubblewrap
from referee.match.bot import BotFault, BotProcess
from referee.match.record import RECORD_FORMAT, RecordWriter, event_entry_bytes
from referee.match.types import BotSpec, Fault, FaultReason, Limits, MatchResult

log = structlog.get_logger("referee.match")

# How far past a decision's time limit the runner's deadline may lie (see ``_play``).
DEADLINE_SLACK_S = 0.002

_VIOLATION_REASONS = {
    "invalid_utf8": FaultReason.INVALID_UTF8,
    "invalid_json": FaultReason.INVALID_JSON,
    "wrong_message": FaultReason.WRONG_MESSAGE,
}




def check_reply(line: bytes, rid: int, legal: list[str]) -> str:
    """The action a reply line names, or ``BotFault`` saying what is wrong with it."""
    plain = decode_plain_action(line)
    if plain is not None:
        reply_id, action = plain
    else:
        msg = _Match._decode(line)
        if not isinstance(msg, ActionMsg):
            raise BotFault(FaultReason.WRONG_MESSAGE, f"expected action, got {msg.type}")
        reply_id, action = msg.id, msg.action
    if reply_id != rid:
        try:
            shown = str(reply_id)
        except ValueError:  # more digits than Python will print
            shown = "(a number too long to show)"
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        raise BotFault(FaultReason.WRONG_REQUEST, f"answered request {shown}, expected {rid}")
    if action not in legal:
        shown = action if len(action) <= 40 else action[:40] + "…"
        raise BotFault(FaultReason.ILLEGAL_ACTION, f"{shown!r} is not among the {len(legal)} legal actions")
    return action


RECORD_FLUSH_S = 0.1  # the record on disk is at most this far behind the game


class RefereeError(RefereeBug):
    """Our own bug or an unusable setting: never a bot's fault."""


def result_for_team(outcome: Outcome, team: int) -> str:
    if outcome.status == "aborted":
        return "aborted"
    if outcome.status == "draw":
        return "draw"
    return "win" if team in outcome.winners else "loss"


class _Match:
    def __init__(self, game: str, options: dict, bots: Sequence[BotSpec], seed: int,
                 record_path: Path | None, limits: Limits, stderr_dir: Path | None,
                 hide: Sequence[Path] = ()) -> None:
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
        self.sandbox = bubblewrap.effective_mode(limits.sandbox)  # SandboxUnavailable: the user's to fix
        # What a sandboxed bot must not see even where it lies inside a folder it may read.
        self.hide = tuple(str(p) for p in (*hide, *(x for x in (self.record_path, self.stderr_dir) if x)))
        self.writer: RecordWriter | None = None
        self.entries: list[dict[str, Any]] = []  # public entries kept for the score table
        self.decisions = 0
        self.bank = [limits.time_bank_s] * self.num_seats
        self.wants_events = [True] * self.num_seats  # set from each bot's `ready`
        self.any_wants_events = True
        # Record lines not yet written: a decision entry (dict), or (event, its JSON or None).
        self._backlog: list[dict[str, Any] | tuple[Event, bytes | None]] = []
        self.log = log.bind(game=self.spec.name, seed=seed)

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
            "started_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
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
                    line = b'{"type":"event","event":' + ev_json + b"}\n"
                    for s in seats:
                        if wants[s]:
                            outbox[s].append(line)
            backlog.append((ev, ev_json))

    def _write_backlog(self) -> None:
        """Record what the last decision caused.  Off the per-decision path: the
        runner calls this once the next request is on its way, so the record is
        written while the next bot thinks, in the same order as it happened.
        One write call for the lot."""
        backlog, writer, entries = self._backlog, self.writer, self.entries
        lines: list[bytes] = []
        for item in backlog:
            if isinstance(item, dict):  # a decision: only ever queued when there is a record
                lines.append(to_json(item) + b"\n")
                continue
            ev, ev_json = item
            if writer is not None:
                lines.append(event_entry_bytes(to_json(ev.data) if ev_json is None else ev_json, ev.to))
            if ev.to is None:
                entries.append({"record": "event", "event": ev.data, "to": None})
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
        procs = [
            BotProcess(s, b, self.limits, self._stderr_path(s, b), self._jail(b)) for s, b in enumerate(self.bots)
        ]
        fault: tuple[int, BotFault] | None = None
        outcome: Outcome | None = None
        try:
            async with trio.open_nursery() as nursery:
                if self.writer is not None:
                    nursery.start_soon(self._flush_record_every, RECORD_FLUSH_S)
                try:
                    fault = await self._handshake(procs, nursery)
                    if fault is None:
                        fault, state = await self._play(procs, state, events)
                    else:  # the engine dealt before the handshake failed: record it, send it nowhere
                        self._route_events(events, [[] for _ in range(self.num_seats)])
                        self._write_backlog()
                    if fault is None:
                        outcome = state.outcome()
                        assert outcome is not None
                    else:
                        outcome = self._forfeit_outcome(fault[0], fault[1])
                    await self._say_game_over(procs, outcome)
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
                fault_value = Fault(seat, exc.reason, exc.message, procs[seat].stderr_tail())
                self._write({"record": "fault", **fault_value.to_json()})
            duration = time.perf_counter() - started
            self._write({
                "record": "result",
                "outcome": outcome.to_json(),
                "decisions": self.decisions,
                "duration_s": round(duration, 3),
                "names": [p.name for p in procs],
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
            record_path=self.record_path, entries=self.entries, sandbox=self.sandbox,
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

    def _jail(self, bot: BotSpec) -> bubblewrap.Jail | None:
        if self.sandbox != "bwrap":
            return None
        return bubblewrap.Jail(network=bot.network, ro_paths=bot.ro_paths, own_dir=bot.own_dir,
                               hide=self.hide, scratch_mb=self.limits.scratch_mb)

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

    async def _handshake(self, procs: list[BotProcess], nursery: trio.Nursery) -> tuple[int, BotFault] | None:
        faults: dict[int, BotFault] = {}
        teams = [[s for s in range(self.num_seats) if self.spec.team_of(s, self.options) == t]
                 for t in range(self.num_teams)]
        time_limits = TimeLimits(
            handshake_ms=int(self.limits.handshake_s * 1000),
            decision_ms=int(self.limits.decision_s * 1000),
            time_bank_ms=int(self.limits.time_bank_s * 1000),
        )

        async def one(p: BotProcess) -> None:
            try:
                await p.start(nursery)
                hello = HelloMsg(
                    game=self.spec.name, rules_version=self.spec.rules_version, options=self.options,
                    seat=p.seat, team=self.spec.team_of(p.seat, self.options), seats=self.num_seats,
                    teams=teams, limits=time_limits,
                )
                await p.send(encode(hello), self.limits.handshake_s)
                with trio.move_on_after(self.limits.handshake_s) as scope:
                    line = await p.receive_line()
                if scope.cancelled_caught:
                    if (over := await p.enforce_limits()) is not None:
                        raise over
                    raise BotFault(FaultReason.HANDSHAKE_TIMEOUT,
                                   f"no ready within {self.limits.handshake_s:g}s")
                msg = self._decode(line)
                if not isinstance(msg, ReadyMsg):
                    raise BotFault(FaultReason.WRONG_MESSAGE, f"expected ready, got {msg.type}")
                p.wants_events = msg.events
                p.name = msg.name
            except BotFault as exc:
                faults[p.seat] = exc

        async with trio.open_nursery() as hs:
            for p in procs:
                hs.start_soon(one, p)
        if faults:
            seat = min(faults)
            return seat, faults[seat]
        self.wants_events = [p.wants_events for p in procs]
        self.any_wants_events = any(self.wants_events)
        self._write({"record": "ready", "names": [p.name for p in procs],
                     "events": [p.wants_events for p in procs]})
        return None

    @staticmethod
    def _decode(line: bytes):
        msg = decode_bot_line(line)
        if isinstance(msg, Violation):
            raise BotFault(_VIOLATION_REASONS[msg.kind], msg.detail)
        return msg

    @staticmethod
    def _take_outbox(p: BotProcess, lines: list[bytes]) -> bytes:
        payload = b"".join(lines) if (lines and p.wants_events) else b""
        lines.clear()
        return payload

    async def _flush(self, procs: list[BotProcess], outbox: list[list[bytes]]) -> None:
        """Send queued events to every seat that wants them (one write per seat)."""
        for s, lines in enumerate(outbox):
            if not lines:
                continue
            p = procs[s]
            payload = self._take_outbox(p, lines)
            if payload:
                try:
                    await p.send(payload, self.limits.decision_s + self.bank[s])
                except BotFault as exc:
                    raise _SeatFault(s, exc) from None

    async def _play(self, procs: list[BotProcess], state, events: list[Event]):
        """The decision loop; returns (fault or None, final state).

        Between a reply and the next request it does only what the next request
        needs (check, apply, legal list, observation, encoding); the record lines
        of the decision just made are written after that request is sent, while
        the bot thinks."""
        outbox: list[list[bytes]] = [[] for _ in range(self.num_seats)]
        self._route_events(events, outbox)
        limits = self.limits
        backlog = self._backlog
        writer = self.writer
        seat, rid, allowed, sent = -1, 0, 0.0, False
        # One cancel scope for the whole game: creating a scope per round trip
        # costs Trio more than the rest of the referee's per-decision work, and so
        # does moving its deadline twice per decision.  So the deadline moves only
        # when it is not already within DEADLINE_SLACK_S after this decision's
        # limit (about once in ten decisions), and a reply that comes after the
        # limit but before the scope fires is a timeout all the same.
        with trio.CancelScope() as clock:
            try:
                while (seat := state.to_act()) is not None:
                    p = procs[seat]
                    legal = state.legal_actions()
                    decision = state.decision()
                    self.decisions += 1
                    rid = self.decisions
                    allowed = limits.decision_s + self.bank[seat]
                    request = encode_request(rid, seat, decision, state.observe(seat), legal, int(allowed * 1000))
                    for other in procs:  # the watchdog may have killed any bot, acting or not
                        if other.limit_fault is not None:
                            raise _SeatFault(other.seat, other.limit_fault)
                    if p.has_unread_output_nowait():
                        raise _SeatFault(seat, BotFault(FaultReason.UNEXPECTED_MESSAGE,
                                                        "wrote output when no request was pending"))
                    payload = self._take_outbox(p, outbox[seat]) + request
                    if any(outbox):  # events for seats that asked for them
                        clock.deadline = math.inf  # their sends have limits of their own
                        await self._flush(procs, outbox)
                    t0 = trio.current_time()
                    sent = False
                    due = t0 + allowed
                    if not due <= clock.deadline <= due + DEADLINE_SLACK_S:
                        clock.deadline = due + DEADLINE_SLACK_S
                    try:
                        await p.write(payload)
                        sent = True
                        if backlog:  # the previous decision's record lines, while this bot thinks
                            self._write_backlog()
                        line = await p.receive_line()
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        clock.deadline = math.inf
                        raise _SeatFault(seat, await p._ended_fault()) from None
                    except BotFault as exc:
                        raise _SeatFault(seat, exc) from None
                    took = trio.current_time() - t0
                    if took > allowed:  # answered within the slack, not within the limit
                        clock.deadline = math.inf
                        break
                    if took > limits.decision_s:
                        self.bank[seat] = max(0.0, self.bank[seat] - (took - limits.decision_s))
                    try:
                        action = check_reply(line, rid, legal)
                    except BotFault as exc:
                        raise _SeatFault(seat, exc) from None
                    if writer is not None:
                        backlog.append({
                            "record": "decision", "n": rid, "seat": seat, "decision": decision,
                            "legal": legal, "action": action, "ms": round(took * 1000, 3),
                        })
                    self._route_events(state.apply(action), outbox)
                else:
                    clock.deadline = math.inf
                    await self._flush(procs, outbox)
                    return None, state
            except _SeatFault as sf:
                return (sf.seat, sf.fault), state
            finally:  # whatever ended the loop, what happened before it is recorded
                self._write_backlog()
        # The acting seat's deadline passed (the scope fired, or the reply came too late).
        p = procs[seat]
        # A bot over a process or memory cap is usually too busy to answer: name the cap.
        if (over := await p.enforce_limits()) is not None:
            return (seat, over), state
        if not sent:
            return (seat, BotFault(FaultReason.NOT_READING, f"stdin stayed full for {allowed:.3f}s")), state
        if p.closed_its_stdout():
            return (seat, BotFault(FaultReason.CLOSED_STDOUT, "closed its stdout but kept running")), state
        return (seat, BotFault(FaultReason.TIMEOUT, f"no reply to request {rid} within {allowed:.3f}s")), state

    async def _say_game_over(self, procs: list[BotProcess], outcome: Outcome) -> None:
        for p in procs:
            if p.process is None:
                continue
            team = self.spec.team_of(p.seat, self.options)
            msg = GameOverMsg(outcome=outcome.to_json(), result=result_for_team(outcome, team))
            try:
                await p.send(encode(msg), 0.2)
            except BotFault:
                pass  # the game is over; a bot that cannot hear it changes nothing


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
) -> MatchResult:
    """Play one game.  Bot faults become a ``forfeit`` outcome, never an exception.

    ``hide``: paths a sandboxed bot must not see even inside a folder it may
    read (a tournament's output folder and file); the record and the stderr
    folder are always hidden."""
    ensure_configured()
    match = _Match(game, options or {}, bots, seed, record_path, limits, stderr_dir, hide)
    return await match.run()
