"""Play a tournament's games on a Dask cluster: ``referee run --dask ADDRESS``
(docs/distributed.md).  Imported only by a run that asks for Dask.

One Dask task plays one game: ``play_task`` hands it to this worker
process's loop of the run (``_RunLoop``: a Trio loop in a thread of its own,
started by the run's first game there), which plays it with the very
function a local worker process runs (``tournaments.job.play_job``),
with its sandbox and limits, and with the run's ``ProcessPool`` on that
worker process: long-lived bots keep their processes from one game to the
next, as on local workers.  The game's record and its bots' stderr are
written to a temporary folder on the worker (one per game, inside one per
run, hidden from every bot) and come back with the result; the coordinator
(the ``referee run`` process) writes them where a local run would, and alone
writes ``results.jsonl`` and the standings.  So the output folder need not be shared, and a game that
Dask plays twice (its first worker died) is written once: each game is one
task, and the runner keeps one result per game id.

What cannot differ between the coordinator and a worker is checked before a
worker's first game (``check_setup``): the Python, referee, dask and
distributed versions, every game's rules version, and each entrant's program
and script, which must be at the same path with the same content (SHA-256)
on every worker.  A worker that fails the check stops the run with one line
naming the worker and what differs.

Ending (the run is over, Ctrl-C, a failed game): tasks not started are
cancelled, and every worker is told to cancel this run's games in progress
and end the run's pool (``_stop_run``): their bots are shut down as in a
local run.  A worker that cannot be reached ends its game by the game's own
limits (Dask cannot interrupt a running task); its result is dropped.  A
worker process ends its pools when it exits, and a run's pool that gets no
game for ``RUN_IDLE_S`` (its coordinator was killed) ends itself.
"""

from __future__ import annotations

import asyncio
import atexit
import fcntl
import hashlib
import importlib.metadata
import json
import logging
import math
import os
import platform
import secrets
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import dask
import distributed
import trio

from referee.errors import OutputError
from referee.games import GAMES
from referee.logging import structlog
from referee.match.commands import CommandError, check_command, script_of
from referee.match.pool import ProcessPool
from referee.match.types import MatchResult

from .chunks import IN_FLIGHT_PER_THREAD, Chunk, ChunkPlanner, audited
from .config import CLUSTER_JOBS, Tournament, dask_quiet
from .executors import Executor, ExecutorError, ExecutorSetupError, Job, Reply

log = structlog.get_logger("referee.dask")

VERSIONS_KEY = "referee-versions"  # where a coordinator publishes its versions on the scheduler
CONNECT_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 10.0
RUN_CLOSE_S = 30.0  # on a worker: how long a run's games and bot processes may take to end
RUN_IDLE_S = 60.0  # on a worker: a run's pool that gets no game for this long is ended (its coordinator may be gone)


class DaskError(ExecutorError):
    """Dask could not play a game (it gave up after workers died, or lost the scheduler)."""


# ---------------------------------------------------------------------------
# What every machine must have the same.


def local_versions() -> dict[str, Any]:
    """The versions a worker must share with the coordinator."""
    return {
        "python": platform.python_version(),
        "referee": importlib.metadata.version("referee"),
        "dask": dask.__version__,
        "distributed": distributed.__version__,
        "rules": {name: spec.rules_version for name, spec in sorted(GAMES.items())},
    }


def version_differences(here: Mapping[str, Any], there: Mapping[str, Any]) -> list[str]:
    """``python 3.11.2 here, 3.12.1 there``, one item per difference."""
    out = [f"{key} {here.get(key)} here, {there.get(key)} there"
           for key in ("python", "referee", "dask", "distributed") if here.get(key) != there.get(key)]
    rules_here, rules_there = here.get("rules", {}), there.get("rules", {})
    out += [f"{game} rules version {rules_here.get(game, 'none')} here, {rules_there.get(game, 'none')} there"
            for game in sorted(set(rules_here) | set(rules_there)) if rules_here.get(game) != rules_there.get(game)]
    return out


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def program_digests(argv: Sequence[str], cwd: Path) -> dict[str, str]:
    """The SHA-256 of each file the command names by path (its program, its
    script), after ``check_command``; ``CommandError`` if it cannot run here.
    A program found on ``PATH`` (an interpreter) need only exist."""
    check_command(argv, cwd, placeholders=True)
    named = [argv[0]] if os.sep in argv[0] else []
    script = script_of(argv)
    named += [script] if script is not None else []
    files = [cwd / name for name in named if "{" not in name]
    try:
        return {str(path): _sha256(path) for path in files}
    except OSError as exc:
        raise CommandError(f"cannot read {exc.filename}: {exc.strerror}") from None


def setup_of(t: Tournament) -> dict[str, Any]:
    """What a worker checks before its first game of ``t``."""
    return {
        "versions": local_versions(),
        "entrants": {e.name: {"argv": list(e.argv), "cwd": str(e.cwd), "files": program_digests(e.argv, e.cwd)}
                     for e in t.entrants},
    }


def check_setup(setup: Mapping[str, Any]) -> str | None:
    """On a worker: what differs from the coordinator's ``setup``, in one line, or None."""
    differences = version_differences(local_versions(), setup["versions"])
    if differences:
        return f"versions differ from the coordinator's: {'; '.join(differences)}"
    for name, entrant in setup["entrants"].items():
        try:
            here = program_digests(entrant["argv"], Path(entrant["cwd"]))
        except CommandError as exc:
            return f"entrant {name!r}: {exc}"
        for path, digest in entrant["files"].items():
            if here.get(path) != digest:
                return (f"entrant {name!r}: {path} differs from the coordinator's "
                        f"(sha256 {here.get(path, 'none')[:12]} here, {digest[:12]} there)")
    return None


def _digest(setup: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(setup, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------
# Worker side: what a Dask task runs.

_lock = threading.Lock()
_checked: dict[str, str | None] = {}  # setup digest -> this worker process's verdict


def worker_name() -> str:
    try:
        address = distributed.get_worker().address
    except ValueError:  # not in a worker (a test calling directly)
        address = "(no worker)"
    return f"worker {address} on {socket.gethostname()}"


def check_worker(setup: Mapping[str, Any]) -> str | None:
    """``check_setup`` once per worker process and setup."""
    digest = _digest(setup)
    with _lock:
        if digest not in _checked:
            _checked[digest] = check_setup(setup)
        return _checked[digest]


_core: list[int | None] = []  # the core this worker process claimed (once), or None


def _claim_core() -> int | None:
    """A core of this machine no other worker process holds, or None when all are
    taken.  A lock file per core, held for the process's life (the kernel drops
    it when the process dies), lets the worker processes of one machine share
    out its cores without talking to each other."""
    from .config import available_cores

    for core in available_cores():
        fd = os.open(os.path.join(tempfile.gettempdir(), f"referee-dask-core-{core}.lock"), os.O_RDWR | os.O_CREAT,
                     0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return core  # fd stays open: the lock is this process's
    return None


def _pin_this_thread() -> None:
    """Pin the calling thread (a run's loop: its games and the bots it starts) to
    this worker process's core, as ``tournaments.workers`` pins a local worker:
    a pipe round trip within one core is far cheaper than across cores."""
    with _lock:
        if not _core:
            _core.append(_claim_core() if hasattr(os, "sched_setaffinity") else None)
    if _core[0] is not None:
        try:
            os.sched_setaffinity(0, {_core[0]})  # 0: the calling thread, inherited by its children
        except OSError as exc:
            log.warning("worker_not_pinned", core=_core[0], error=str(exc))


def _sweep_stale_roots(tmp: Path) -> None:
    """Remove the run folders (``referee-run-RUN-pidN-*``) of worker processes that
    are gone: one killed (SIGKILL, or its machine's out-of-memory killer) never
    removed its own."""
    for root in tmp.glob("referee-run-*-pid*-*"):
        pid = root.name.rsplit("-pid", 1)[1].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(root, ignore_errors=True)
        except OSError:  # alive (another user's process)
            pass


class _RunLoop:
    """One run's games on this worker process: a Trio loop in a thread of its
    own, started by the run's first game here, that plays every game Dask gives
    this process (``play``, from a task's thread) with one ``ProcessPool``, as a
    local worker's ``serve`` does.  So a long-lived bot's process plays game
    after game on this worker, and a K-table bot serves concurrent games.

    The bots are started from the loop's thread (``referee.match.bot._Child``),
    and bubblewrap's ``--die-with-parent`` is tied to that thread: it lives
    until the run's pool is ended (``close``).  Each game writes its record and
    stderr logs in a folder of its own under ``root``, one folder per run and
    worker process, which every game hides from its bots: the pool reuses a
    process only for a game whose files lie in a hidden path, so a sandboxed
    bot never sees the records of the games it played before."""

    def __init__(self, run: str, pin: bool) -> None:
        self.run = run
        self.pin = pin
        _sweep_stale_roots(Path(tempfile.gettempdir()))
        self.root = Path(tempfile.mkdtemp(prefix=f"referee-run-{run}-pid{os.getpid()}-"))
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._games: trio.Nursery | None = None
        self._pool: ProcessPool | None = None
        self.closing = False  # (on the loop's thread) no new game is started
        self.idle_closed = False  # it closed itself, idle: a game that finds it closed starts a new loop
        self.idle_s = RUN_IDLE_S
        self.playing = 0  # games in progress
        self._active_at = 0.0  # (Trio clock) when a game last started or ended
        self._thread = threading.Thread(target=self._main, name=f"referee-run-{run}", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._token is None:
            raise RuntimeError(f"the game loop of run {run} did not start")

    def _main(self) -> None:
        if self.pin:
            _pin_this_thread()  # for the thread's life: its bots inherit the core
        try:
            trio.run(self._serve)
        finally:
            self._ready.set()  # (had it failed before it was ready)
            shutil.rmtree(self.root, ignore_errors=True)

    async def _serve(self) -> None:
        async with trio.open_nursery() as processes:
            pool = ProcessPool(processes)
            try:
                async with trio.open_nursery() as games:
                    self._pool, self._games = pool, games
                    self._token = trio.lowlevel.current_trio_token()
                    self._active_at = trio.current_time()
                    self._ready.set()
                    await self._watch_idle()  # until ``close`` cancels the games, or idle
            finally:
                await pool.aclose()  # shielded: every process the pool kept
                processes.cancel_scope.cancel()

    async def _watch_idle(self) -> None:
        """Past ``idle_s`` without a game, end the run here: a coordinator killed
        by SIGKILL never says that its run ended.  (A game of the run that comes
        later starts a new loop.)"""
        while True:
            await trio.sleep_until(self._active_at + self.idle_s)
            if self.playing == 0 and trio.current_time() >= self._active_at + self.idle_s:
                break
        with _runs_lock:
            if _runs.get(self.run) is self:
                del _runs[self.run]
        log.info("dask_run_idle", run=self.run, idle_s=self.idle_s)
        self.idle_closed = True
        self._stop()

    async def _play(self, job: Job) -> Reply | None:
        if self.closing:
            return None
        assert self._games is not None
        done = trio.Event()
        replies: list[Reply] = []

        async def game() -> None:
            from .job import play_job  # the function a local worker process runs

            self.playing += 1
            self._active_at = trio.current_time()
            try:
                replies.append(await play_job(job, self._pool))
            finally:
                self.playing -= 1
                self._active_at = trio.current_time()
                done.set()

        self._games.start_soon(game)
        await done.wait()
        return replies[0] if replies else None  # None: stopped (``close``)

    def play(self, job: Job) -> Reply | None:
        """Play ``job`` on the loop (blocking the calling thread); None if it was stopped."""
        try:
            return trio.from_thread.run(self._play, job, trio_token=self._token)
        except (trio.RunFinishedError, trio.Cancelled):
            return None

    def end_processes(self) -> None:
        """(From a task's thread) end every bot process the run's pool keeps, as at the run's
        end: what they write to stderr as they go is in their last games' logs once this returns."""
        async def end() -> None:
            if self._pool is not None:
                await self._pool.aclose()

        with suppress(trio.RunFinishedError, trio.Cancelled):
            trio.from_thread.run(end, trio_token=self._token)

    def stderr_paths(self) -> set[Path]:
        """(From a task's thread) the stderr logs the run's kept processes write to now."""
        def paths() -> set[Path]:
            return self._pool.stderr_paths() if self._pool is not None else set()

        try:
            return trio.from_thread.run_sync(paths, trio_token=self._token)
        except (trio.RunFinishedError, trio.Cancelled):
            return set()

    def _stop(self) -> int:
        self.closing = True
        stopped = self.playing
        if self._games is not None:
            self._games.cancel_scope.cancel()
        return stopped

    def close(self, timeout: float = RUN_CLOSE_S) -> int:
        """Stop the games in progress (their bots shut down as in a local run), end
        every process of the pool, and remove ``root``; bounded.  How many games were stopped."""
        stopped = 0
        if self._thread.is_alive() and self._token is not None:
            with suppress(trio.RunFinishedError):
                stopped = trio.from_thread.run_sync(self._stop, trio_token=self._token)
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("dask_run_not_closed", run=self.run, after_s=timeout)
        shutil.rmtree(self.root, ignore_errors=True)
        return stopped


_runs: dict[str, _RunLoop] = {}  # by run id: this worker process's loop of each run it plays
_ended: set[str] = set()  # runs ended here (``_stop_run``): a game of theirs that comes late is not played
_runs_lock = threading.Lock()  # (not ``_lock``: a loop's thread takes that one to pin itself as it starts)


def _run_loop(run: str, pin: bool) -> _RunLoop | None:
    with _runs_lock:
        if run in _ended:
            return None
        loop = _runs.get(run)
        if loop is None:
            loop = _runs[run] = _RunLoop(run, pin)
        return loop


def play_task(job: Job, setup: Mapping[str, Any], run: str, pin: bool = True) -> Reply:
    """One game, on a worker: the reply of ``play_job``, with the record's and
    the stderr logs' bytes, and who played it.  The game is played by this worker
    process's loop of ``run`` (``_RunLoop``), with the run's pool of live bot
    processes.  With ``pin`` (the tournament's ``pin_cores``) that loop and its
    bots run on one core of the worker's machine."""
    worker = worker_name()
    problem = check_worker(setup)
    if problem is not None:
        return {"error": problem, "setup_error": True, "worker": worker}
    while (loop := _run_loop(run, pin)) is not None:
        try:
            here = Path(tempfile.mkdtemp(prefix="game-", dir=loop.root))
        except FileNotFoundError:
            if loop.idle_closed:  # it closed itself, idle, just now
                continue
            raise
        try:
            local = {**job, "record_path": str(here / "record.jsonl") if job["record_path"] else None,
                     "stderr_dir": str(here / "stderr") if job["stderr_dir"] else None,
                     "hide": [*job.get("hide", ()), str(loop.root)]}
            reply = loop.play(local)
            if reply is None:
                if loop.idle_closed:
                    continue
                break
            if "result" in reply:
                record = here / "record.jsonl"
                reply["record"] = record.read_bytes() if record.exists() else None
                logs = here / "stderr"
                reply["stderr"] = {p.name: p.read_bytes() for p in sorted(logs.iterdir())} if logs.is_dir() else {}
        finally:
            shutil.rmtree(here, ignore_errors=True)
        reply["worker"] = worker
        return reply
    return {"error": "stopped by the coordinator", "worker": worker}


# ---------------------------------------------------------------------------
# Worker side, chunks: many games per task, small results, a spool for the files.

SPOOL_PIECE = 8 << 20  # bytes of records and stderr logs one fetch task brings back, at most
SHARED_TOKEN = ".referee-shared-output"  # the token file that proves a worker sees the output folder


def shared_output_problem(folder: str, token: str) -> str | None:
    """On a worker: None if ``folder`` holds the coordinator's token (it is the same folder), else why not."""
    try:
        here = (Path(folder) / SHARED_TOKEN).read_text().strip()
    except OSError as exc:
        return f"--shared-output: cannot read {Path(folder) / SHARED_TOKEN} here ({exc.strerror}): " \
               "the output folder is not shared with this worker"
    if here != token:
        return f"--shared-output: {folder} here is not the coordinator's output folder (another token)"
    return None


def _compact(result: dict[str, Any]) -> dict[str, Any]:
    """What a results line needs of a ``MatchResult``: its seats (the coordinator
    has them) and options are left out."""
    return {k: v for k, v in result.items() if k not in ("seats", "options", "record_path")}


def play_chunk_task(chunk: int, jobs: Sequence[Job], setup: Mapping[str, Any], run: str, pin: bool = True,
                    files: str = "spool", shared: tuple[str, str] | None = None) -> Reply:
    """One chunk on a worker: its games one after another, on this worker process's
    loop of ``run`` (so twins never run at once, and long-lived bots keep their
    processes; the pool never gives a process a deal it has played).  ``files``:
    ``"spool"``, records and stderr logs go to a spool folder of this worker,
    fetched later by ``fetch_spool``; ``"shared"``, straight where the jobs say
    (the output folder is shared, ``shared`` = (folder, token) checks it);
    ``"none"``, nowhere (an audit).  The reply holds each game's compact result,
    never a file."""
    started = time.monotonic()
    worker = worker_name()
    problem = check_worker(setup) or (shared_output_problem(*shared) if shared is not None else None)
    if problem is not None:
        return {"error": problem, "setup_error": True, "worker": worker}
    while (loop := _run_loop(run, pin)) is not None:
        spool = loop.root / "spool" / f"chunk{chunk}-{secrets.token_hex(4)}"
        try:
            spool.mkdir(parents=True)
        except FileNotFoundError:
            if loop.idle_closed:
                continue
            raise
        games: list[dict[str, Any]] = []
        restart = False
        for job in jobs:
            if _let_go():
                break
            here = spool / str(job["id"])
            hide = [*job.get("hide", ()), str(loop.root)]
            if files == "spool":
                local = {**job, "record_path": str(here / "record.jsonl") if job["record_path"] else None,
                         "stderr_dir": str(here / "stderr") if job["stderr_dir"] else None, "hide": hide}
            elif files == "shared":
                local = {**job, "hide": hide}
            else:
                local = {**job, "record_path": None, "stderr_dir": None, "hide": hide}
            reply = loop.play(local)
            if reply is None:
                restart = loop.idle_closed
                break
            if "error" in reply:
                shutil.rmtree(spool, ignore_errors=True)
                return {**reply, "worker": worker}
            games.append({"id": job["id"], "result": _compact(reply["result"]), "kept": reply.get("kept", [])})
        else:
            if files != "spool":
                shutil.rmtree(spool, ignore_errors=True)
            return {"chunk": chunk, "worker": worker, "address": _address(),
                    "spool": spool.name if files == "spool" else None, "games": games,
                    "summary": {"games": len(games), "faults": sum(g["result"]["fault"] is not None for g in games),
                                "seconds": round(time.monotonic() - started, 3)}}
        shutil.rmtree(spool, ignore_errors=True)
        if not restart:
            break
    return {"error": "stopped by the coordinator", "worker": worker}


def _let_go() -> bool:
    """In a task: whether its coordinator let go of it (gone, killed, or the run ended):
    the scheduler told this worker to cancel or forget the running task.  A chunk then
    plays no further game (its games in progress end by their limits)."""
    try:
        key = distributed.worker.thread_state.key
        task = distributed.get_worker().state.tasks.get(key)
    except (AttributeError, ValueError):  # not in a worker's task (a direct call)
        return False
    return task is None or task.state in ("cancelled", "released", "forgotten")


def _address() -> str:
    try:
        return str(distributed.get_worker().address)
    except ValueError:
        return "(no worker)"


KEPT_SPOOLS = 3  # a worker keeps the stderr logs of this many fetched chunks (and older ones kept bots write to)
_sent: dict[str, dict[Path, int]] = {}  # by run: stderr logs of fetched chunks, and the bytes sent of each
_fetched: dict[str, list[Path]] = {}  # by run: fetched chunks' spools kept for their stderr logs, oldest first
_trimmed: dict[str, set[str]] = {}  # by run: fetched chunks' spools trimmed to the logs kept bots write to


def _read_from(path: Path, offset: int, budget: int) -> tuple[bytes, bool]:
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read(budget)
        return data, f.read(1) != b""


def fetch_spool(run: str, spool: str, cursor: tuple[int, int] = (0, 0), limit: int = SPOOL_PIECE) -> Reply:
    """On the worker that played a chunk (a task pinned to it): up to ``limit``
    bytes of its spool's files from ``cursor`` (file index, offset) on, as
    ``(spool/path, offset, bytes)`` pieces, and the cursor to go on from (None:
    all sent).  Once all is sent, the chunk's records are removed and its stderr
    logs kept (for the last ``KEPT_SPOOLS`` chunks, and after that those a live
    process writes to): a long-lived bot writes its stderr between games to its
    last game's log, and what it wrote since an earlier fetch comes back (as
    pieces at the offset sent so far, a log begun since at 0) with the next.
    An ``error`` if the spool is not here (another worker process)."""
    with _runs_lock:
        loop = _runs.get(run)
    if loop is None:
        return {"error": f"no run {run} on {worker_name()}"}
    if not spool:  # the run's end (``_sweep``): end the kept processes, then only what they wrote since
        loop.end_processes()
    folder = loop.root / "spool" / spool if spool else None
    if folder is not None and not folder.is_dir():
        return {"error": f"no spool {spool} of this run on {worker_name()}"}
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) if folder else []
    index, offset = cursor
    pieces: list[tuple[str, int, bytes]] = []
    budget = limit
    sent = _sent.setdefault(run, {})
    while index < len(names) and budget > 0:
        assert folder is not None
        data, more = _read_from(folder / names[index], offset, budget)
        pieces.append((f"{spool}/{names[index]}", offset, data))
        budget -= len(data)
        if more:
            offset += len(data)
        else:
            if "/stderr/" in names[index]:
                sent[folder / names[index]] = offset + len(data)  # what a kept bot adds later: from here
            index, offset = index + 1, 0
    if index < len(names):
        return {"pieces": pieces, "cursor": (index, offset)}
    fetched = _fetched.setdefault(run, [])
    done_chunks = {f.name for f in fetched} | _trimmed.setdefault(run, set())
    for path in (loop.root / "spool").glob("*/*/stderr/*"):  # a log a kept bot began after its fetch
        if path not in sent and path.parts[-4] in done_chunks:
            sent[path] = 0
    for path, done in list(sent.items()):  # what kept bots wrote since: to their last game's log
        if budget <= 0:
            break
        try:
            size = path.stat().st_size
        except OSError:
            sent.pop(path)
            continue
        if size > done:
            data, _ = _read_from(path, done, budget)
            pieces.append((path.relative_to(loop.root / "spool").as_posix(), done, data))
            sent[path] = done + len(data)
            budget -= len(data)
    if folder is None:
        return {"pieces": pieces, "cursor": None}
    for record in folder.glob("*/record.jsonl"):
        record.unlink(missing_ok=True)
    fetched.append(folder)
    if len(fetched) > KEPT_SPOOLS:
        _trim_spools(loop, fetched, sent, _trimmed[run])
    return {"pieces": pieces, "cursor": None}


def _trim_spools(loop: Any, kept: list[Path], sent: dict[Path, int], trimmed: set[str]) -> None:
    """Remove the spools of all but the last ``KEPT_SPOOLS`` fetched chunks, except the
    stderr logs a live process of the run writes to now (however many chunks ago its last
    game was: what it prints while idle goes with a later fetch, not lost), and remove
    those logs too once no process writes to them and all of each was sent."""
    live = loop.stderr_paths()
    emptied: set[Path] = set()
    while len(kept) > KEPT_SPOOLS:
        old = kept.pop(0)
        trimmed.add(old.name)
        for path in [p for p in old.rglob("*") if p.is_file() and p not in live]:
            sent.pop(path, None)
            path.unlink(missing_ok=True)
        emptied.add(old)
    recent = tuple(kept)
    for path, done in list(sent.items()):
        if path in live or any(folder in path.parents for folder in recent):
            continue
        with suppress(OSError):
            if path.stat().st_size > done:
                continue  # what it wrote last goes with the next fetch
        sent.pop(path)
        path.unlink(missing_ok=True)
        emptied.add(next(f for f in path.parents if f.parent.name == "spool"))
    holding = {folder for path in live for folder in path.parents}  # (a log not made yet: its folder stays)
    for old in emptied:  # folders of trimmed chunks, the deepest first, if nothing is left in them
        for folder in sorted((d for d in old.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)) + [old]:
            if folder not in holding:
                with suppress(OSError):
                    folder.rmdir()


def _end_run_here(run: str) -> int:
    with _runs_lock:
        _ended.add(run)
        loop = _runs.pop(run, None)
        _sent.pop(run, None)
        _fetched.pop(run, None)
        _trimmed.pop(run, None)
    return loop.close() if loop is not None else 0


async def _stop_run(run: str) -> int:
    """On a worker (``Client.run``, awaited on the worker's event loop): cancel
    ``run``'s games in progress and end its pool's processes; how many games
    were stopped.  A game of ``run`` that Dask starts here later is not played."""
    return await asyncio.to_thread(_end_run_here, run)


def _end_all_runs() -> None:
    """At a worker process's exit: end every run's games and processes (bounded)."""
    with _runs_lock:
        runs = list(_runs)
    for run in runs:
        _end_run_here(run)


atexit.register(_end_all_runs)  # a worker process that exits ends its runs' bots (a no-op elsewhere)


# ---------------------------------------------------------------------------
# Coordinator side.


def _deliver(reply: Reply, job: Job) -> Reply:
    """Write the record and stderr logs that came back with ``reply`` where the job says."""
    record, logs = reply.pop("record", None), reply.pop("stderr", {})
    if record is not None and job["record_path"]:
        path = Path(job["record_path"])
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(record)
        except OSError as exc:
            raise OutputError.of(path, exc, "record") from None
    if job["stderr_dir"]:
        folder = Path(job["stderr_dir"])
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, data in logs.items():
                (folder / Path(name).name).write_bytes(data)
        except OSError as exc:
            raise OutputError.of(folder, exc, "stderr log in") from None
    return reply


class DaskExecutor(Executor):
    """Each job is a task of ``client``; ``jobs`` games are kept in flight.  A run
    plays chunks (``play_chunks``); ``submit`` plays one game (tests, the seam)."""

    error = DaskError
    # The function a chunk task runs.  Only benchmarks/dask_scale.py replaces it (with a
    # stand-in whose games are a fixed sleep, to load a scheduler with many workers);
    # no setting or option reaches it.
    chunk_task: Callable[..., Reply] = staticmethod(play_chunk_task)

    def __init__(self, client: distributed.Client, setup: dict[str, Any], jobs: int, pin: bool = True) -> None:
        self.client = client
        self.pin = pin
        self.setup = setup
        self.jobs = jobs
        self.run = secrets.token_hex(6)  # task keys of this run, apart from other runs on the scheduler
        self.abandoned: list[distributed.Future] = []  # submitted, then given up by the runner
        self.shared: tuple[str, str] | None = None  # (output folder, token) when the workers write there
        self._jobs: dict[int, Job] = {}  # by game id: the jobs of the chunks handed out
        self._live: set[distributed.Future] = set()  # chunk, fetch and audit tasks not finished
        self._fetching: dict[distributed.Future, str] = {}  # fetch task -> the worker it is pinned to
        self._auditing: dict[distributed.Future, set[str]] = {}  # audit task -> the workers it may run on
        self._gone: set[Any] = set()  # keys of fetches failed because their worker left
        self.audited: list[dict[str, Any]] = []  # every audit compared
        self.mismatches: list[dict[str, Any]] = []  # the audits that differed
        self.audit_skipped = 0  # audits not played: no other worker
        self.per_worker: list[dict[str, Any]] = []  # every chunk played: worker, games, faults, seconds
        self.chunk_status: dict[str, Any] = {}
        self._threads: dict[str, int] = {}  # worker address -> threads (``threads``)
        self._token = trio.lowlevel.current_trio_token()
        self._next = 0

    async def submit(self, job: Job) -> Reply:
        self._next += 1
        job = {**job, "id": self._next}
        future = self.client.submit(play_task, job, self.setup, self.run, self.pin,
                                    key=f"referee-{self.run}-{self._next}", pure=False)
        done = trio.Event()

        def finished(_: object) -> None:  # on Dask's callback thread
            with suppress(trio.RunFinishedError):
                self._token.run_sync_soon(done.set)

        future.add_done_callback(finished)
        try:
            await done.wait()
        except trio.Cancelled:
            self.abandoned.append(future)
            raise
        reply = await trio.to_thread.run_sync(_result, future)
        return await trio.to_thread.run_sync(_deliver, reply, job)

    # -- chunks ------------------------------------------------------------

    def threads(self) -> dict[str, int]:
        """Worker address -> threads, as last asked of the scheduler (``_watch_workers``: every
        ``FETCH_WATCH_S``; no call here, so a refill costs the scheduler nothing)."""
        return self._threads

    def _ask_threads(self) -> dict[str, int]:
        self._threads = {str(a): int(n) for a, n in self.client.nthreads().items()}
        return self._threads

    def _watch(self, future: distributed.Future, event: tuple[Any, ...]) -> None:
        def finished(_: object) -> None:  # on Dask's callback thread
            with suppress(trio.RunFinishedError):
                self._token.run_sync_soon(self._events.send_nowait, event)

        self._live.add(future)
        future.add_done_callback(finished)

    def _submit_chunk(self, chunk: Chunk, jobs: list[Job], files: str, *, attempt: int = 0,
                      workers: list[str] | None = None) -> None:
        kind = "audit" if files == "none" else "play"
        future = self.client.submit(
            self.chunk_task, chunk.id, jobs, self.setup, self.run, self.pin, files, self.shared,
            key=f"referee-{self.run}-{kind}{chunk.id}-{attempt}", pure=False,
            **({"workers": workers, "allow_other_workers": False} if workers else {}))
        if workers:
            self._auditing[future] = set(workers)
        self._watch(future, (kind, future, chunk, attempt))

    def _submit_fetch(self, chunk: Chunk, reply: Reply, cursor: tuple[int, int], attempt: int) -> None:
        future = self.client.submit(
            fetch_spool, self.run, reply["spool"], cursor, key=f"referee-{self.run}-fetch{chunk.id}-{attempt}-{cursor}",
            pure=False, workers=[reply["address"]], allow_other_workers=False, priority=10)
        self._fetching[future] = reply["address"]
        self._watch(future, ("fetch", future, chunk, attempt, reply))

    def _write_pieces(self, pieces: Sequence[tuple[str, int, bytes]]) -> None:
        """Write spool pieces (``chunkN-x/GAME/record.jsonl``, ``.../GAME/stderr/NAME``) where the jobs say."""
        for name, offset, data in pieces:
            parts = name.split("/")
            job = self._jobs.get(int(parts[1])) if len(parts) >= 3 and parts[1].isdigit() else None
            if job is None:
                continue
            if parts[2:] == ["record.jsonl"] and job["record_path"]:
                path = Path(job["record_path"])
            elif len(parts) == 4 and parts[2] == "stderr" and job["stderr_dir"]:
                path = Path(job["stderr_dir"]) / Path(parts[3]).name
            else:
                continue
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("r+b" if offset > 0 and path.exists() else "wb") as f:
                    f.seek(offset)
                    f.write(data)
            except OSError as exc:
                raise OutputError.of(path, exc, "record" if parts[2] == "record.jsonl" else "stderr log") from None

    async def play_chunks(
        self, planner: ChunkPlanner, jobs_for: Callable[[Chunk], list[Job]],
        deliver: Callable[[Chunk, str, list[tuple[int, MatchResult]]], Awaitable[None]],
        should_stop: Callable[[], bool] = lambda: False, *, audit: float = 0.0, seed: int = 0,
        note: Callable[[str], None] = lambda line: None,
    ) -> None:
        """Play the planner's chunks, about ``IN_FLIGHT_PER_THREAD`` per worker thread in
        flight, refilled as chunks complete (following workers that join or leave).
        A chunk's games reach ``deliver`` once their files are in place (fetched
        from the worker's spool, or written there by the worker itself with
        ``shared``).  A fetch that fails (the worker is gone) replays the chunk,
        with a ``note``; a share ``audit`` of chunks is also played on another
        worker and compared, a mismatch noted and kept in ``self.mismatches``."""
        self._events, receive = trio.open_memory_channel[tuple[Any, ...]](math.inf)
        files = "shared" if self.shared is not None else "spool"
        playing: dict[int, Chunk] = {}  # chunk id -> chunk, until its games are delivered
        audits: dict[int, dict[str, Reply]] = {}  # chunk id -> {"primary": reply, "audit": reply}
        began = time.monotonic()
        self.chunk_status = {"workers": 0, "queued": 0, "running": 0, "done": 0, "games_per_s": 0.0}
        delivered_games = 0

        def refill() -> None:
            threads = self.threads()
            total = sum(threads.values()) or 1
            # Until a chunk has measured the game time, one (of one unit) per thread; then
            # IN_FLIGHT_PER_THREAD per thread, sized from that time.
            wanted = total if planner.game_s() is None and planner.fixed is None else IN_FLIGHT_PER_THREAD * total
            while len(playing) < wanted and not should_stop():
                chunk = planner.next(total)
                if chunk is None:
                    break
                jobs = jobs_for(chunk)
                self._jobs.update((job["id"], job) for job in jobs)
                playing[chunk.id] = chunk
                self._submit_chunk(chunk, jobs, files)
                if audited(chunk.id, seed, audit):
                    audits[chunk.id] = {}
            running = min(len(playing), total)
            self.chunk_status.update(workers=len(threads), running=running, queued=len(playing) - running)

        def compare(chunk: Chunk) -> None:
            pair = audits.get(chunk.id, {})
            if "primary" not in pair or "audit" not in pair:
                return
            del audits[chunk.id]
            mine = {g["id"]: _outcome(g["result"]) for g in pair["primary"]["games"]}
            theirs = {g["id"]: _outcome(g["result"]) for g in pair["audit"]["games"]}
            differ = sorted(i for i in mine if mine[i] != theirs.get(i))
            entry = {"chunk": chunk.id, "games": sorted(mine), "worker": pair["primary"]["worker"],
                     "auditor": pair["audit"]["worker"], "differ": differ}
            self.audited.append(entry)
            if differ:
                self.mismatches.append(entry)
                note(f"audit: chunk {chunk.id} differs between {pair['primary']['worker']} and "
                     f"{pair['audit']['worker']} in {len(differ)} of {len(mine)} games (first: game {differ[0]})")

        def start_audit(chunk: Chunk, reply: Reply) -> None:
            others = [a for a in self.threads() if a != reply["address"]]
            if not others:
                audits.pop(chunk.id, None)
                self.audit_skipped += 1
                return
            self._submit_chunk(chunk, [self._jobs[g.id] for g in chunk.games], "none", workers=others)

        async def finish(chunk: Chunk, reply: Reply) -> None:
            nonlocal delivered_games
            games = [(g["id"], self._match(g)) for g in reply["games"]]
            await deliver(chunk, reply["worker"], games)
            playing.pop(chunk.id, None)
            delivered_games += len(games)
            self.chunk_status["done"] += 1
            self.chunk_status["games_per_s"] = delivered_games / max(1e-9, time.monotonic() - began)

        async def replay(chunk: Chunk, attempt: int, why: str, worker: str) -> None:
            note(f"the records of chunk {chunk.id} ({len(chunk.games)} games) could not be fetched from {worker} "
                 f"({why}): its games are replayed")
            self._submit_chunk(chunk, [self._jobs[g.id] for g in chunk.games], files, attempt=attempt + 1)

        async def watch_fetches() -> None:
            """Follow the workers that join and leave; a fetch pinned to a worker that
            left would wait forever: fail it."""
            while True:
                await trio.sleep(FETCH_WATCH_S)
                alive = set(await trio.to_thread.run_sync(self._ask_threads))
                refill()
                for future, allowed in list(self._auditing.items()):  # every worker it may run on left
                    if future.done():
                        self._auditing.pop(future, None)
                    elif not allowed & alive:
                        self._auditing.pop(future, None)
                        future.cancel()
                if self._fetching:
                    for future, address in list(self._fetching.items()):
                        if address not in alive:
                            self._fetching.pop(future, None)
                            self._gone.add(future.key)
                            future.cancel()

        await trio.to_thread.run_sync(self._ask_threads)
        refill()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch_fetches)
                await self._drive(receive, playing, audits, planner, refill, finish, replay, compare, start_audit, note)
                if files == "spool":
                    await self._sweep()
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # one failure (or Ctrl-C), wrapped by the nursery: raise it plain
            if group.subgroup(KeyboardInterrupt) is not None:
                raise KeyboardInterrupt from None
            first = group.exceptions[0]
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None

    async def _drive(self, receive: Any, playing: dict, audits: dict, planner: ChunkPlanner, refill: Callable,
                     finish: Callable, replay: Callable, compare: Callable, start_audit: Callable,
                     note: Callable[[str], None]) -> None:
        """``play_chunks``' loop: one completed task at a time, then a refill."""
        while playing or audits:
            event = await receive.receive()
            kind, future = event[0], event[1]
            self._live.discard(future)
            if kind == "play":
                _, _, chunk, attempt = event
                reply = await trio.to_thread.run_sync(_result, future)
                _raise_for(reply)
                planner.measured(reply["summary"]["seconds"], reply["summary"]["games"])
                self.per_worker.append({"worker": reply["worker"], "address": reply["address"],
                                        "chunk": chunk.id, "kept": any(g["kept"] for g in reply["games"]),
                                        **reply["summary"]})
                if chunk.id in audits and "primary" not in audits[chunk.id]:
                    audits[chunk.id]["primary"] = reply
                    start_audit(chunk, reply)
                if reply["spool"] is None:
                    await finish(chunk, reply)
                else:
                    self._submit_fetch(chunk, reply, (0, 0), attempt)
            elif kind == "fetch":
                _, _, chunk, attempt, reply = event
                self._fetching.pop(future, None)
                try:
                    if future.key in self._gone:
                        raise DaskError("the worker left")
                    got = await trio.to_thread.run_sync(_result, future)
                    if "error" in got:
                        raise DaskError(got["error"])
                except DaskError as exc:
                    await replay(chunk, attempt, str(exc), reply["worker"])
                else:
                    await trio.to_thread.run_sync(self._write_pieces, got["pieces"])
                    if got["cursor"] is not None:
                        self._submit_fetch(chunk, reply, tuple(got["cursor"]), attempt)
                    else:
                        await finish(chunk, reply)
            else:  # an audit
                _, _, chunk, _ = event
                try:
                    got = await trio.to_thread.run_sync(_result, future)
                    _raise_for(got)
                except (DaskError, ExecutorSetupError) as exc:
                    audits.pop(chunk.id, None)
                    note(f"audit: chunk {chunk.id} could not be replayed ({exc})")
                else:
                    audits.setdefault(chunk.id, {})["audit"] = got
                    compare(chunk)
            refill()

    async def _sweep(self) -> None:
        """At the run's end: every worker whose bots kept their processes ends them (as a
        local run does at its end) and sends what they wrote to their last games' stderr
        logs since its last fetch (bounded by ``SWEEP_S``).  Processes are kept only for
        long-lived bots: other runs skip it."""
        addresses = sorted({c["address"] for c in self.per_worker if c["kept"]} & set(self.threads()))
        futures = [self.client.submit(fetch_spool, self.run, "", key=f"referee-{self.run}-sweep-{i}", pure=False,
                                      workers=[a], allow_other_workers=False, priority=10)
                   for i, a in enumerate(addresses)]
        if not futures:
            return
        with trio.move_on_after(SWEEP_S):
            for future in futures:
                try:
                    got = await trio.to_thread.run_sync(_result, future, abandon_on_cancel=True)
                except DaskError:
                    continue
                if "pieces" in got:
                    await trio.to_thread.run_sync(self._write_pieces, got["pieces"])
        self.abandoned.extend(f for f in futures if not f.done())

    def _match(self, game: dict[str, Any]) -> MatchResult:
        job = self._jobs[game["id"]]
        result = MatchResult.from_json({**game["result"], "seats": job["bots"], "options": job["options"],
                                        "record_path": job["record_path"]})
        return result

    def stop(self) -> None:
        """End the run on every worker (blocking; bounded by the caller): cancel
        what was abandoned, stop the games in progress, and end every bot process
        the workers keep for this run (``_stop_run``)."""
        abandoned = [*self.abandoned, *self._live]
        if abandoned:
            self.client.cancel(abandoned)
        stopped = self.client.run(_stop_run, self.run, on_error="return")
        failed = {w: f"{type(e).__name__}: {e}" for w, e in stopped.items() if isinstance(e, BaseException)}
        for address, error in sorted(failed.items()):
            log.warning("dask_run_not_ended", worker=address, error=error)  # gone, with its processes
        log.info("dask_run_ended", abandoned=len(self.abandoned),
                 running=sum(n for n in stopped.values() if isinstance(n, int)))


SWEEP_S = 10.0  # at a run's end, how long the last stderr of kept bots may take to come back
FETCH_WATCH_S = 2.0  # how often the workers that fetches wait on are looked for


def _outcome(result: Mapping[str, Any]) -> dict[str, Any]:
    """What an audit compares of a game: seed, status, scores, winners, reason (and fault)."""
    fault = result.get("fault")
    return {"seed": result["seed"], "outcome": result["outcome"],
            "fault": (fault["seat"], fault["reason"]) if fault else None}


def _raise_for(reply: Reply) -> None:
    if reply.get("output_error"):
        raise OutputError(reply["error"])
    if reply.get("setup_error"):
        raise ExecutorSetupError(f"{reply['worker']}: {reply['error']}")
    if "error" in reply:
        raise DaskError(f"{reply['worker']}: {reply['error']}")


def _result(future: distributed.Future) -> Reply:
    try:
        reply: Reply = future.result()
    except distributed.client.FutureCancelledError as exc:
        raise DaskError(f"the Dask scheduler dropped the game: {exc}") from None
    except Exception as exc:  # KilledWorker after allowed-failures deaths, a lost connection
        raise DaskError(f"Dask could not play the game: {type(exc).__name__}: {exc}") from None
    return reply


def dask_setup(worker: object) -> None:
    """Run by each worker process of ``--dask local:N`` as it starts (Dask's preload):
    a Ctrl-C at the terminal reaches the whole process group, but only the
    coordinator may act on it; it stops the workers in order, as it does local
    worker processes (``tournaments.workers.main`` ignores SIGINT likewise)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _local_cluster(workers: int) -> distributed.LocalCluster:
    # Worker processes are started by spawn (distributed.worker.multiprocessing-method's
    # default, made sure of here): forking a process that runs a Trio loop would copy that loop.
    # Less monitoring (DASK_QUIET): it cuts an idle scheduler's CPU.
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn", **dask_quiet()}):
        return distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", scheduler_port=0,
            dashboard_address=":0", silence_logs=logging.ERROR, preload=[__name__])


def _share_output(client: distributed.Client, output: Path) -> tuple[str, str]:
    """Write a token file in ``output`` and check that every worker reads it there:
    the output folder is shared.  ``ExecutorSetupError`` naming a worker that does not."""
    token = secrets.token_hex(16)
    path = output / SHARED_TOKEN
    try:
        output.mkdir(parents=True, exist_ok=True)
        path.write_text(token + "\n")
    except OSError as exc:
        raise OutputError.of(path, exc) from None
    verdicts = client.run(shared_output_problem, str(output), token)
    for address, problem in sorted(verdicts.items()):
        if problem is not None:
            raise ExecutorSetupError(f"worker {address}: {problem}")
    return str(output), token


def connect(address: str) -> distributed.Client:
    """A client of the scheduler at ``address``; ``ExecutorSetupError`` if it cannot be reached."""
    try:
        # Results are gathered from the workers themselves, not through the scheduler.
        return distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False, direct_to_workers=True)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ExecutorSetupError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


async def _blocking(fn: Callable[[], Any]) -> Any:
    return await trio.to_thread.run_sync(fn, abandon_on_cancel=True)


@asynccontextmanager
async def open_dask_executor(t: Tournament) -> AsyncIterator[DaskExecutor]:
    """Connect to ``t.dask`` (or start a local cluster for ``local:N``), check
    every worker, and publish this machine's versions for ``referee worker``."""
    assert t.dask is not None
    setup = await trio.to_thread.run_sync(setup_of, t)
    cluster: distributed.LocalCluster | None = None
    client: distributed.Client | None = None
    executor: DaskExecutor | None = None
    try:
        address = t.dask
        if address.startswith("local:"):
            cluster = await _blocking(lambda: _local_cluster(int(address.removeprefix("local:"))))
            address = cluster.scheduler_address
        client = await _blocking(lambda: connect(address))
        assert client is not None
        c = client
        await _blocking(lambda: c.set_metadata(VERSIONS_KEY, setup["versions"]))
        if not c.nthreads():
            log.warning("dask_waiting_for_workers", scheduler=address)
            await _blocking(lambda: c.wait_for_workers(1))
        verdicts: dict[str, str | None] = await _blocking(lambda: c.run(check_worker, setup))
        for address_, problem in sorted(verdicts.items()):
            if problem is not None:
                raise ExecutorSetupError(f"worker {address_}: {problem}")
        threads = sum(c.nthreads().values())
        jobs = t.jobs if t.jobs != CLUSTER_JOBS else 2 * threads  # a game queued behind each running one
        log.info("dask_connected", scheduler=address, workers=len(verdicts), threads=threads, jobs=jobs)
        executor = DaskExecutor(c, setup, jobs, t.pin_cores)
        if t.shared_output:
            executor.shared = await trio.to_thread.run_sync(_share_output, c, t.output)
        yield executor
    finally:
        with trio.CancelScope(shield=True):
            steps = ((executor and executor.stop, RUN_CLOSE_S + CLOSE_TIMEOUT_S),
                     (client and client.close, CLOSE_TIMEOUT_S), (cluster and cluster.close, CLOSE_TIMEOUT_S))
            for step, bound in steps:
                if step:
                    try:
                        with trio.move_on_after(bound):
                            await _blocking(step)
                    except Exception as exc:  # a worker or scheduler already gone: nothing left to stop there
                        log.warning("dask_close_failed", step=step.__qualname__, error=f"{type(exc).__name__}: {exc}")
