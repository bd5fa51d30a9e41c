"""Long-lived bot processes (protocol version 2): reuse across games, and tables.

A ``ProcessPool`` hands each seat of a game a ``Lease``, the seat's
``BotChannel``.  The lease takes a live process from the pool or starts one;
when the game is over the runner releases it, and the pool keeps the process
for a later game if the bot said in its first ``ready`` that it plays many
games and the game ended well for its seat (``BotChannel.keep``); any other
process is shut down on the usual schedule (``BotProcess.aclose``).  So a
version-1 bot, which says nothing, gets one process per game as before.

Fair play, guaranteed here and nowhere else:

* a process never gets a game whose deal seed it has played (or is playing):
  duplicate deals play one seed in several seatings, and a bot that remembers
  cards would know its rivals' hands;  this also means a process never serves
  two seats of one game;
* a process keeps its sandbox, caps and scratch folders for its whole life
  (its CPU-time cap counts every game it played);
* a process that wrote anything between games, exited, or was killed for a
  cap is not given another game;
* reuse needs the same bot (command, folder, sandbox options), the same limits
  and the same hidden paths, and a game whose record and stderr folder lie in
  a hidden path (a tournament's output folder): the sandbox set up for the
  first game then hides every later game's files too.

Many tables: a bot that says ``tables: K`` (K > 1) in its first ``ready``
gets a ``TableHost``: its lines, both ways, carry the ``table`` they belong to,
and the pool gives the process up to K games at once (each its own table id,
never reused within the process).  The host routes each line the bot writes
to its table's ``TableLane``.  A fault at one table ends that game for that
seat only, and the process gets no new games (it is closed when its last
table ends); a process that is broken as a whole (it exits, is killed for a
cap, or writes a line without a table) ends every game it serves, each
game recording the fault as its own.  A K-table process's stderr goes to the
stderr file of the game it started with.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from protocol.codec import Violation, decode_bot_line
from protocol.framing import TOO_LONG, LineBuffer
from referee.match.bot import BotProcess
from referee.match.channel import BotChannel, BotFault
from referee.match.types import FaultReason

__all__ = ["Lease", "ProcessPool", "TableHost", "TableLane"]

MAX_IDLE = 16  # idle processes a pool keeps at least room for (the least recently used go first)


# The action form nearly every multi-table bot writes: the table right after the type.
_TAGGED_ACTION = re.compile(rb'\{"type":"action","table":(0|[1-9][0-9]{0,8}),')


# ---------------------------------------------------------------------------
# Tables.


class TableLane(BotChannel):
    """One table of a K-table process: the channel of one seat of one game."""

    def __init__(self, host: TableHost, table: int, seat: int, log: Any) -> None:
        self.host = host
        self.table = table
        self.seat = seat
        self.log = log
        self._buf = bytearray()
        self._eof = False
        self._wake = trio.Event()
        self._tag = b'{"table":%d,' % table

    async def start(self, nursery: trio.Nursery) -> None:  # the host's process runs already
        return None

    @property
    def started(self) -> bool:
        return True

    @property
    def limit_fault(self) -> BotFault | None:  # type: ignore[override]
        return self.host.proc.limit_fault

    def fault_holder(self) -> Any:
        return self.host.proc

    def tag(self, data: bytes) -> bytes:
        """Every line of ``data`` with this table's id.  A ``hello`` carries its table already."""
        if data.startswith(b'{"type":"hello"'):
            return data
        return self._tag + data[1:-1].replace(b"\n{", b"\n" + self._tag) + b"\n"

    async def write(self, data: bytes) -> None:
        await self.host.write(self.tag(data))

    def deliver(self, line: bytes) -> None:
        self._buf += line
        self._buf += b"\n"
        self._wake.set()

    def end(self) -> None:
        self._eof = True
        self._wake.set()

    async def receive_some(self) -> bytes:
        while not self._buf and not self._eof:
            self._wake = trio.Event()
            await self._wake.wait()
        if self._buf:
            data = bytes(self._buf)
            self._buf.clear()
            return data
        return b""

    def receive_some_nowait(self) -> bytes | None:
        if self._buf:
            data = bytes(self._buf)
            self._buf.clear()
            return data
        return b"" if self._eof else None

    async def ended_fault(self) -> BotFault:
        if self.host.broken is not None:
            return self.host.broken
        return await self.host.proc.ended_fault()

    async def enforce_limits(self) -> BotFault | None:
        return await self.host.proc.enforce_limits()

    def closed_its_stdout(self) -> bool:
        return self.host.proc.closed_its_stdout()

    def stderr_tail(self) -> tuple[str, ...]:
        return self.host.proc.stderr_tail()

    async def wait_stderr_drained(self, timeout: float = 0.3) -> None:
        if self.host.broken is not None or not self.host.proc.alive:
            await self.host.proc.wait_stderr_drained(timeout)

    async def aclose(self) -> None:  # the lease releases the table
        return None


class TableHost:
    """A process serving up to ``capacity`` tables: routes what it writes by ``table``."""

    def __init__(self, proc: BotProcess, capacity: int, nursery: trio.Nursery) -> None:
        self.proc = proc
        self.capacity = capacity
        self.lanes: dict[int, TableLane] = {}
        self.next_table = 0
        self.broken: BotFault | None = None  # the process is broken as a whole
        self._write_lock = trio.Lock()  # tables write concurrently; lines must not interleave
        self._framer = LineBuffer(proc.limits.max_line_bytes)
        self._nursery = nursery
        self._reading = False

    def open(self, seat: int, log: Any) -> TableLane:
        lane = self.lanes[self.next_table] = TableLane(self, self.next_table, seat, log)
        self.next_table += 1
        if not self._reading:
            self._reading = True
            self._nursery.start_soon(self._read)
        return lane

    @property
    def free(self) -> bool:
        return self.broken is None and len(self.lanes) < self.capacity and self.proc.alive

    async def write(self, data: bytes) -> None:
        async with self._write_lock:
            await self.proc.write(data)

    async def _read(self) -> None:
        try:
            while self.broken is None:
                data = await self.proc.receive_some()
                if not data:
                    break
                for line in self._framer.feed(data):
                    self._route(line)
                    if self.broken is not None:
                        break
        finally:
            for lane in self.lanes.values():
                lane.end()

    def _route(self, line: bytes | Any) -> None:
        if line is TOO_LONG:
            return self._break(FaultReason.LINE_TOO_LONG,
                               f"a line longer than {self.proc.limits.max_line_bytes} bytes, so without a table")
        m = _TAGGED_ACTION.match(line)
        if m is not None:
            table: Any = int(m[1])
            routed = b'{"type":"action",' + line[m.end():]
        else:
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError):
                msg = None
            table = msg.get("table") if type(msg) is dict else None
            if type(table) is not int:
                decoded = decode_bot_line(line)
                if isinstance(decoded, Violation):
                    return self._break(FaultReason(decoded.kind), f"a line without a table: {decoded.detail}")
                return self._break(FaultReason.WRONG_MESSAGE, "a line without a table (it serves several)")
            routed = line
        lane = self.lanes.get(table)
        if lane is not None:
            lane.deliver(routed)
        elif not 0 <= table < self.next_table:
            self._break(FaultReason.WRONG_MESSAGE, f"a line for table {table}, which it was never given")
        else:  # a late line for a table whose game has ended (a timeout, say): that game is over
            self.proc.log.info("bot_line_for_ended_table", table=table)

    def _break(self, reason: FaultReason, message: str) -> None:
        self.broken = BotFault(reason, message)
        self.proc.log.info("bot_broken", reason=reason.value, message=message, tables=len(self.lanes))
        self.proc.kill()


# ---------------------------------------------------------------------------
# The pool.


@dataclass(slots=True, eq=False)
class _Live:
    """A process of the pool and what it has played."""

    proc: BotProcess
    key: Any  # None: never reused
    seeds: set[int] = field(default_factory=set)  # every deal seed it was given
    games: int = 0  # games it was given
    budget: int | None = 1  # games it said it plays (None: many); from its first ready
    announced: bool = False
    host: TableHost | None = None
    retired: bool = False  # gets no new game
    settled: trio.Event = field(default_factory=trio.Event)  # its first ready came (or it is gone)

    @property
    def may_play_more(self) -> bool:
        return (not self.retired and self.announced and self.key is not None
                and (self.budget is None or self.games < self.budget))


class Lease(BotChannel):
    """One seat's channel for one game, on a process of the pool.

    The per-decision methods are the process's (or its table's) own, bound on
    the instance, so a lease costs the runner nothing per decision."""

    def __init__(self, pool: ProcessPool, seat: int, make: Callable[[], BotProcess], key: Any, seed: int,
                 stderr_path: Path | None, log: Any) -> None:
        self.pool = pool
        self.seat = seat
        self.log = log
        self._make = make
        self.key = key
        self.seed = seed
        self.stderr_path = stderr_path
        self.live: _Live | None = None
        self.channel: BotChannel | None = None
        self.kept = False  # released with its process still serving (idle, or other tables)
        self.name = ""

    def _bind(self, channel: BotChannel) -> None:
        self.channel = channel
        self.write = channel.write  # type: ignore[method-assign]
        self.receive_some = channel.receive_some  # type: ignore[method-assign]
        self.receive_some_nowait = channel.receive_some_nowait  # type: ignore[method-assign]
        self.table = channel.table

    async def start(self, nursery: trio.Nursery) -> None:
        await self.pool._checkout(self)

    @property
    def started(self) -> bool:
        return self.channel is not None and self.channel.started

    @property
    def limit_fault(self) -> BotFault | None:  # type: ignore[override]
        return self.channel.limit_fault if self.channel is not None else None

    def fault_holder(self) -> Any:
        return self.channel.fault_holder() if self.channel is not None else self

    async def write(self, data: bytes) -> None:
        assert self.channel is not None
        await self.channel.write(data)

    async def receive_some(self) -> bytes:
        assert self.channel is not None
        return await self.channel.receive_some()

    def receive_some_nowait(self) -> bytes | None:
        assert self.channel is not None
        return self.channel.receive_some_nowait()

    async def ended_fault(self) -> BotFault:
        assert self.channel is not None
        return await self.channel.ended_fault()

    async def enforce_limits(self) -> BotFault | None:
        return await self.channel.enforce_limits() if self.channel is not None else None

    def closed_its_stdout(self) -> bool:
        return self.channel is not None and self.channel.closed_its_stdout()

    def stderr_tail(self) -> tuple[str, ...]:
        return self.channel.stderr_tail() if self.channel is not None else ()

    async def wait_stderr_drained(self, timeout: float = 0.3) -> None:
        if self.channel is not None and not self.kept:  # a kept process's stderr stays open
            await self.channel.wait_stderr_drained(timeout)

    def adopt(self, ready: Any) -> None:
        live = self.live
        assert live is not None
        if live.announced:  # what a process can do is read from its first ready only
            return
        live.announced = True
        live.budget = ready.games
        self.pool._settle(live, "tables" if ready.tables > 1 else "single")
        if ready.tables > 1:
            live.host = TableHost(live.proc, ready.tables, self.pool.nursery)
            self._bind(live.host.open(self.seat, self.log))
            self.pool._hosts.append(live)

    async def replace(self, nursery: trio.Nursery) -> None:
        if not self.reused:
            await super().replace(nursery)
        old = self.live
        assert old is not None
        old.retired = True
        await self.pool._release(self, keep=False)
        self.live = self.channel = None
        self.reused = False
        self.table = 0
        await self.pool._start_new(self)

    async def aclose(self) -> None:
        await self.pool._release(self, keep=self.keep)


class ProcessPool:
    """Live bot processes, reused across games (``reuse``) and shared by tables.

    The processes and their helper tasks run in ``nursery``; ``aclose`` ends
    them all (bounded and shielded, like ``BotProcess.aclose``).  With
    ``reuse=False`` (``referee play``) every process plays one game; a
    K-table bot is still spoken to with tables."""

    def __init__(self, nursery: trio.Nursery, *, reuse: bool = True, max_idle: int = MAX_IDLE) -> None:
        self.nursery = nursery
        self.reuse = reuse
        self.max_idle = max_idle
        self._idle: list[_Live] = []  # least recently used first
        self._hosts: list[_Live] = []
        self._closing: set[_Live] = set()
        self._starting: list[_Live] = []  # started, first ready not yet come
        self._kind: dict[Any, str] = {}  # by key, once known: "single" (one table) or "tables"
        # By bot name, every key it came with: more than one means its command changes from seat to
        # seat or game to game (``{seed}``, ``{seat}``, ``{game}`` in a tournament), so none recurs.
        self._keys: dict[str, set[Any]] = {}
        self.started = 0  # processes started, for tests and benchmarks
        self.kept_names: set[str] = set()  # bots (by name) a process of which was kept after a game
        self._leased = 0  # seats being played now
        self._peak = 0  # the most seats played at once: as many idle processes may be needed again

    def lease(self, seat: int, make: Callable[[], BotProcess], *, name: str, key: Any, seed: int,
              stderr_path: Path | None, log: Any) -> Lease:
        """The channel of ``seat``: a process made by ``make`` or a live one of the same ``key``
        (``name``: the bot's, to notice a bot whose command differs per game)."""
        lease = Lease(self, seat, make, key if self.reuse else None, seed, stderr_path, log)
        lease.name = name
        return lease

    def stderr_paths(self) -> set[Path]:
        """The stderr logs the pool's processes write to now (idle, serving tables, or being
        closed): a kept process writes what it prints between games to its last game's log."""
        return {live.proc.stderr_path for live in (*self._idle, *self._hosts, *self._closing)
                if live.proc.stderr_path is not None}

    @property
    def live(self) -> int:
        """Processes the pool holds (idle, serving tables, or being closed)."""
        return len(self._idle) + len(self._hosts) + len(self._closing)

    async def _checkout(self, lease: Lease) -> None:
        key, seed = lease.key, lease.seed
        if key is not None:
            keys = self._keys.setdefault(lease.name, set())
            keys.add(key)
            if len(keys) > 1:
                for live in [o for o in self._idle if o.key in keys]:  # they will never be asked for
                    self._idle.remove(live)
                    self.nursery.start_soon(self._close, live)
        while key is not None:
            for live in self._hosts:
                host = live.host
                assert host is not None
                if live.key == key and live.may_play_more and seed not in live.seeds and host.free:
                    self._given(live, lease)
                    lane = host.open(lease.seat, lease.log)
                    lease._bind(lane)
                    return
            for live in reversed(self._idle):
                if live.key == key and seed not in live.seeds:
                    self._idle.remove(live)
                    proc = live.proc
                    if proc.alive and proc.receive_some_nowait() is None:
                        self._given(live, lease)
                        proc.next_game(lease.seat, lease.stderr_path, lease.log)
                        lease._bind(proc)
                        return
                    # It wrote between games, exited or hit a cap: not given another game.
                    proc.log.info("bot_not_reused", reason="output between games" if proc.alive else "gone")
                    self.nursery.start_soon(self._close, live)
                    break
            # Until a bot of this key has said whether it serves tables, a new game waits for a
            # process of that key that is starting (and could take this seed): a K-table bot's
            # concurrent games then go to one process, not one each.
            if self._kind.get(key, "tables") != "tables":
                break
            pending = next((o for o in self._starting if o.key == key and seed not in o.seeds), None)
            if pending is None:
                break
            await pending.settled.wait()
        await self._start_new(lease)

    def _settle(self, live: _Live, kind: str | None) -> None:
        if live in self._starting:
            self._starting.remove(live)
        live.settled.set()
        if kind is not None and live.key is not None:
            self._kind[live.key] = kind

    def _count(self) -> None:
        self._leased += 1
        self._peak = max(self._peak, self._leased)

    def _given(self, live: _Live, lease: Lease) -> None:
        self._count()
        live.seeds.add(lease.seed)
        live.games += 1
        lease.live = live
        lease.reused = True

    async def _start_new(self, lease: Lease) -> None:
        proc = lease._make()
        live = lease.live = _Live(proc, lease.key, {lease.seed}, games=1)
        self._count()
        lease._bind(proc)
        self.started += 1
        self._starting.append(live)
        await proc.start(self.nursery)  # BotFault (spawn_failed): the runner's to record

    async def _release(self, lease: Lease, keep: bool) -> None:
        live, lease.live = lease.live, None
        if live is None:
            return
        self._leased -= 1
        self._settle(live, None)  # (a process that never said ready: whoever waits on it, stop)
        if live.host is not None:
            lane = lease.channel
            assert isinstance(lane, TableLane)
            live.host.lanes.pop(lane.table, None)
            if not keep:
                live.retired = True  # a fault at one of its tables: no new games
            lease.kept = live.host.broken is None and live.proc.alive
            if live.host.lanes:
                return
            if live.may_play_more and lease.kept:
                self.kept_names.add(lease.name)
                return  # no table now: kept for the next games (needed again when as many run at once)
            lease.kept = False
            self._hosts.remove(live)
            await self._close(live)
            return
        recurs = len(self._keys.get(lease.name, ())) == 1
        if keep and self.reuse and recurs and live.may_play_more and live.proc.alive:
            lease.kept = True
            self.kept_names.add(lease.name)
            self._idle.append(live)
            if len(self._idle) > max(self.max_idle, 2 * self._peak):
                self.nursery.start_soon(self._close, self._idle.pop(0))
            return
        await self._close(live)

    async def _close(self, live: _Live) -> None:
        self._closing.add(live)
        try:
            await live.proc.aclose()
        finally:
            self._closing.discard(live)

    async def aclose(self) -> None:
        """End every process of the pool, at once and in parallel."""
        with trio.CancelScope(shield=True):
            lives = [*self._idle, *self._hosts]
            self._idle.clear()
            self._hosts.clear()
            async with trio.open_nursery() as closer:
                for live in lives:
                    closer.start_soon(self._close, live)
            with contextlib.suppress(trio.TooSlowError), trio.fail_after(10):
                while self._closing:
                    await trio.sleep(0.01)
