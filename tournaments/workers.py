"""Play a tournament's games in worker processes, one per core, each pinned
to its core together with the bots it starts.

Why: a game is a strict ping-pong between the referee and one bot at a time,
so it loses nothing by running on one core, and a pipe round trip between
processes on one core is far cheaper than across cores (on the 2-core VM this
was built on: 5 µs against 165 µs, and ~65 µs of CPU burnt per crossing; see
``benchmarks/tournament_jobs.py``).  With one referee process for every game,
each game's bots wake a referee that may sit on another core, and that one
process's event loop also caps how much referee work can run at once.  With a
worker per core, games on different cores share nothing but the disk.

Each worker runs ``python -m tournaments.workers`` and plays several games at
once when ``jobs`` exceeds the number of workers.  It reads one job per line
on stdin (a game to play, with an id) and answers one line per job on stdout
(the ``MatchResult`` or an error), in the order games finish.  End of file on
stdin means stop: an idle worker exits, a busy one cancels its games, whose
bots are shut down on the usual schedule (``BotProcess.aclose``), then exits.
So a referee that dies, even by SIGKILL, takes its workers and their bots
with it; workers start in their own session, so a Ctrl-C at the terminal
reaches only the referee, which stops them in order.

Each worker keeps a ``ProcessPool`` (``referee.match.pool``) for its whole
life: a bot that says it plays many games (protocol version 2) keeps its
processes from one game to the next, a K-table bot serves up to K of the
worker's concurrent games from one process, and every process is ended when
the worker stops (the run ended, was interrupted, or its referee died).

Bot faults are results, as everywhere; an exception from the match runner in
a worker, or a worker that dies, is a referee bug: ``WorkerError``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from protocol.framing import TOO_LONG, LineBuffer
from referee.logging import configure_logging, current_level, structlog
from referee.match.bot import describe_exit
from referee.match.pool import ProcessPool
from referee.match.types import BotSpec, Limits
from tournaments.config import available_cores
from tournaments.executors import Executor, ExecutorError, Job, Reply
from tournaments.job import play_job

log = structlog.get_logger("referee.workers")

_ROOT = Path(__file__).resolve().parent.parent  # holds the `tournaments` and `referee` packages
_MAX_LINE = 64 << 20  # a result line carries no record entries: far below this
WORKER_STOP_S = 5.0  # after the bots' own shutdown schedule, how long a worker may take to exit


class WorkerError(ExecutorError):
    """A worker process failed: the referee's fault, never a bot's."""


async def _read_lines(stream: trio.abc.ReceiveStream) -> AsyncIterator[bytes]:
    """Complete lines from a pipe until end of file (a closed or broken pipe counts as one)."""
    framer = LineBuffer(_MAX_LINE)
    while True:
        try:
            data = await stream.receive_some(1 << 16)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        if not data:
            return
        for line in framer.feed(bytes(data)):  # bytes(b) is b itself: no copy
            if line is not TOO_LONG:
                yield line  # type: ignore[misc]


def can_pin() -> bool:
    return hasattr(os, "sched_setaffinity")


# ---------------------------------------------------------------------------
# Referee side.


@dataclass(slots=True)
class _Pending:
    """A job sent to a worker: set ``done`` once its reply arrived or the worker died."""

    done: trio.Event = field(default_factory=trio.Event)
    reply: dict[str, Any] | None = None


class _Worker:
    def __init__(self, index: int, core: int | None, process: trio.Process) -> None:
        self.index = index
        self.core = core
        self.process = process
        self.waiting: dict[int, _Pending] = {}  # by job id
        # For long-lived bots: how many games of each (deal seed, bot name) were sent here, and
        # how many sets of a bot's processes it must hold (the most games of one deal, or at
        # once): a game whose deal every set has played would need new processes.
        self.given: Counter[tuple[int, str]] = Counter()
        self.sets: Counter[str] = Counter()
        self.playing: Counter[str] = Counter()  # games in flight, by bot name
        self.failure: str | None = None
        self._send_lock = trio.Lock()  # games start concurrently; a stream takes one sender at a time

    @property
    def busy(self) -> int:
        return len(self.waiting)

    async def read_replies(self) -> None:
        """Hand each reply line to the job waiting for it; on EOF fail them all."""
        assert self.process.stdout is not None
        try:
            async for line in _read_lines(self.process.stdout):
                try:
                    reply = json.loads(line)
                    pending = self.waiting.pop(reply["id"], None)
                except (ValueError, KeyError, TypeError):
                    log.error("worker_bad_line", pid=self.process.pid, line=line[:200])
                    continue
                if pending is not None:
                    pending.reply = reply
                    pending.done.set()
        finally:
            with trio.CancelScope(shield=True):
                with trio.move_on_after(1):
                    await self.process.wait()
            self.failure = f"worker process {self.process.pid} {describe_exit(self.process.returncode)}"
            for pending in self.waiting.values():
                pending.done.set()
            self.waiting.clear()

    async def play(self, job_id: int, job: dict[str, Any]) -> dict[str, Any]:
        if self.failure is not None:
            raise WorkerError(self.failure)
        pending = self.waiting[job_id] = _Pending()
        assert self.process.stdin is not None
        try:
            async with self._send_lock:
                await self.process.stdin.send_all(json.dumps({"id": job_id, **job}).encode() + b"\n")
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.waiting.pop(job_id, None)
            raise WorkerError(self.failure or f"worker process {self.process.pid} stopped reading") from None
        await pending.done.wait()
        if pending.reply is None:
            raise WorkerError(f"{self.failure or 'worker stopped'} while playing a game")
        return pending.reply

    async def aclose(self, stop_s: float) -> None:
        """Close stdin (the worker stops its games and exits); past ``stop_s``, kill it."""
        proc = self.process
        with trio.CancelScope(shield=True):
            if proc.stdin is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    await proc.stdin.aclose()
            with trio.move_on_after(stop_s):
                await proc.wait()
            if proc.returncode is None:
                log.warning("worker_killed", pid=proc.pid, after_s=stop_s)
                proc.kill()
                await proc.wait()


class WorkerPool(Executor):
    """The local executor (``tournaments.executors``): jobs go to the least busy
    worker; between equally busy ones, to one whose kept processes of the job's
    long-lived bots have not all played the job's deal (``fresh_for``)."""

    error = WorkerError

    def __init__(self, workers: list[_Worker], stop_s: float) -> None:
        self.workers = workers
        self.stop_s = stop_s
        self.jobs = len(workers)
        self._next_id = 0
        self.kept: set[str] = set()  # bots (by name) whose processes the workers keep between games
        self._freed = trio.Event()

    def _fresh_on(self, w: _Worker, seed: int, names: Iterable[str]) -> bool:
        """Whether ``w`` holds, for each long-lived bot of the game, a set of processes
        that has not played this deal (as far as the games sent to it tell)."""
        return all(w.given[seed, n] < max(1, w.sets[n]) for n in names if n in self.kept)

    def _pick(self, seed: int, names: Iterable[str]) -> _Worker:
        """The least busy live worker; between equally busy ones, one fresh for the game."""
        names = tuple(names)
        return min(self.workers, key=lambda w: (w.failure is not None, w.busy,
                                                not self._fresh_on(w, seed, names), w.index))

    def fresh_for(self, seed: int, bots: Sequence[BotSpec]) -> bool:
        names = {b.name for b in bots}
        return self._fresh_on(self._pick(seed, names), seed, names)

    async def wait_fresh(self, seed: int, bots: Sequence[BotSpec]) -> None:
        names = {b.name for b in bots}
        while not self.fresh_for(seed, bots) and any(
                w.failure is None and self._fresh_on(w, seed, names) for w in self.workers):
            await self._freed.wait()

    async def submit(self, job: Job) -> Reply:
        seed, names = job["seed"], {b["name"] for b in job["bots"]}
        worker = self._pick(seed, names)
        for name in names:
            worker.given[seed, name] += 1
            worker.playing[name] += 1
            worker.sets[name] = max(worker.sets[name], worker.given[seed, name], worker.playing[name])
        self._next_id += 1
        try:
            reply = await worker.play(self._next_id, job)
        finally:
            worker.playing.subtract(names)
            self._freed.set()  # a worker has room again: a game waiting for one looks again
            self._freed = trio.Event()
        self.kept.update(reply.get("kept", ()))
        return {**reply, "worker": f"worker process {worker.process.pid}"}


def worker_command(core: int | None, log_level: str) -> list[str]:
    cmd = [sys.executable, "-m", "tournaments.workers", "--log-level", log_level]
    return cmd + (["--core", str(core)] if core is not None else [])


@asynccontextmanager
async def open_worker_pool(count: int, *, pin: bool = True, limits: Limits = Limits()) -> AsyncIterator[WorkerPool]:
    """Start ``count`` workers (pinned round-robin to this process's cores when
    ``pin``); on exit stop them all, in-flight games included, within a bound."""
    cores = available_cores() if pin and can_pin() else []  # worker i gets cores[i % len]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
    stop_s = limits.grace_s + limits.term_s + WORKER_STOP_S
    workers: list[_Worker] = []
    try:
        async with trio.open_nursery() as nursery:
            try:
                for i in range(count):
                    core = cores[i % len(cores)] if cores else None
                    proc = await trio.lowlevel.open_process(
                        worker_command(core, current_level()), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        env=env, start_new_session=True,
                    )
                    worker = _Worker(i, core, proc)
                    workers.append(worker)
                    nursery.start_soon(worker.read_replies)
                log.info("workers_started", count=count, cores=[w.core for w in workers])
                yield WorkerPool(workers, stop_s)
            finally:
                with trio.CancelScope(shield=True):
                    async with trio.open_nursery() as closer:
                        for w in workers:
                            closer.start_soon(w.aclose, stop_s)
    except BaseExceptionGroup as group:
        # The nursery only runs the reply readers: give the caller the body's own
        # exception (a TournamentError, Cancelled, KeyboardInterrupt), not a group.
        if len(group.exceptions) == 1 and not isinstance(group.exceptions[0], BaseExceptionGroup):
            raise group.exceptions[0] from None
        raise


# ---------------------------------------------------------------------------
# Worker side: ``python -m tournaments.workers [--core N] [--log-level L]``.


async def serve() -> None:
    """Play each job line from stdin, answer each on stdout; stop at end of file.
    The games share one pool of bot processes, ended with the worker."""
    stdin = trio.lowlevel.FdStream(os.dup(0))
    stdout = trio.lowlevel.FdStream(os.dup(1))
    lock = trio.Lock()

    async def one(line: bytes) -> None:
        reply = await play_job(json.loads(line), pool)
        async with lock:
            try:
                await stdout.send_all(json.dumps(reply).encode() + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                games.cancel_scope.cancel()  # the referee is gone: stop

    async with trio.open_nursery() as processes:
        pool = ProcessPool(processes)
        try:
            async with trio.open_nursery() as games:
                async for line in _read_lines(stdin):
                    games.start_soon(one, line)
                games.cancel_scope.cancel()  # stdin closed: stop the games in progress, their bots included
        finally:
            await pool.aclose()  # shielded: every process the pool kept
            processes.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tournaments.workers", description="(internal) a game worker")
    ap.add_argument("--core", type=int, default=None)
    ap.add_argument("--log-level", default="warning")
    args = ap.parse_args(argv)
    # The referee decides when to stop: Ctrl-C, a closed terminal or a service manager's SIGTERM
    # sent to the whole group reach it too, and it ends this worker's games (and then the worker,
    # by closing its input); a referee that is killed outright closes that input as well.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    configure_logging(args.log_level)
    if args.core is not None and can_pin():
        try:
            os.sched_setaffinity(0, {args.core})  # inherited by every bot this worker starts
        except OSError as exc:
            log.warning("worker_not_pinned", core=args.core, error=str(exc))
    trio.run(serve)
    return 0


if __name__ == "__main__":
    sys.exit(main())
