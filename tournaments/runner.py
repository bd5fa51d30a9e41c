"""Play a tournament: up to ``jobs`` games at once, durable results, resume.

The output directory, what a resume trusts and the results file are in
``tournaments.output``; the standings files in ``tournaments.standings_files``;
atomic and fsync'ed writes in ``tournaments.durable``.

Games run as tasks of one nursery, gated by a ``trio.CapacityLimiter`` and
started in game-id order (with one bounded exception, see ``_dispatch``);
each task has its game played by a worker process pinned to a core with its
bots (``tournaments.workers``: one worker per core, several games each when
``jobs`` exceeds the cores).
Results are written from a worker thread (``fsync`` may block for
milliseconds; the event loop keeps serving the other games' bots meanwhile).
A bot's fault is a result like any other; an exception from the match
runner is a referee bug and stops the tournament (finished games are kept).
So does a write the file system refuses (a full disk), as an ``OutputError``
naming the file: finished games stay in ``results.jsonl``, no temporary file
is left, and the next run resumes and writes the standings.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import json
import math
import sys
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import trio

from referee.errors import OutputError, RefereeBug, user_fault_in
from referee.logging import structlog
from referee.match.runner import run_match
from referee.match.types import MatchResult

from . import cluster_checks
from .chunks import Chunk, ChunkPlanner
from .config import Tournament
from .durable import write_atomic
from .executor_factory import open_executor
from .executors import make_job
from .output import OpenedOutput, OutputDir, ResultsWriter, open_output
from .results import GameResult
from .schedule import ScheduledGame
from .sprt import SprtRun
from .standings import Standings
from .standings_files import write_current_standings

log = structlog.get_logger("referee.tournament")

CLUSTER_FILE = "cluster.json"  # a Dask run's per-worker checks and audits (never in standings.json)
STANDINGS_EVERY_S = 10.0  # during a run, standings.json / .csv are rewritten at most this often
APART_POLL_S = 0.05  # a game kept apart from its twin looks again this often for the twin's place back
PlayFn = Callable[..., Awaitable[MatchResult]]


class TournamentError(RefereeBug):
    """A game failed for a reason that is not a bot's fault: a referee bug."""


class ProgressSink(Protocol):
    def start(self, *, total: int, done: int, faults: int) -> None: ...
    def advance(self, result: GameResult) -> None: ...
    def finish(self) -> None: ...


@runtime_checkable
class ChunkExecutor(Protocol):
    """An executor that plays chunks of whole duplicate units (``tournaments.dask_executor``)."""

    chunk_status: dict
    audited: list
    mismatches: list
    audit_skipped: int

    async def play_chunks(self, planner: ChunkPlanner, jobs_for: Callable[[Chunk], list[dict]],
                          deliver: Callable[[Chunk, str, list[tuple[int, MatchResult]]], Awaitable[None]],
                          should_stop: Callable[[], bool] = ..., *, audit: float = ..., seed: int = ...,
                          note: Callable[[str], None] = ...) -> None: ...


class NoProgress:
    def start(self, *, total: int, done: int, faults: int) -> None:
        pass

    def advance(self, result: GameResult) -> None:
        pass

    def finish(self) -> None:
        pass


# ---------------------------------------------------------------------------


@dataclass(slots=True)
class TournamentRun:
    results: dict[int, GameResult]  # every finished game, resumed ones included
    resumed: int  # games found already finished
    played: int  # games played by this run
    standings: Standings
    cluster: dict | None = None  # a Dask run's cluster.json (per worker games, faults, checks, audits)


async def run_tournament(
    t: Tournament,
    *,
    progress: ProgressSink | None = None,
    play: PlayFn | None = None,
    opened: OpenedOutput | None = None,
    sprt: SprtRun | None = None,
) -> TournamentRun:
    """Play every scheduled game not yet in ``results.jsonl``.

    ``opened`` is what ``open_output(t)`` returned, if the caller opened the
    output directory already (to report a bad one before starting);
    ``play`` is the match runner: by default games are played by the
    executor ``t`` asks for (``tournaments.executors``: worker processes, one
    per core, or a Dask cluster); tests pass a fake or ``run_match`` itself to
    play in this process.

    With ``sprt``, no new game starts once the SPRT has decided (on the
    complete duplicate units finished so far); games already started finish
    and are recorded, and a resumed run that has decided plays nothing."""
    if opened is None:
        opened = open_output(t)
    t, done = opened.tournament, opened.done
    pending = [g for g in t.schedule() if g.id not in done]
    if sprt is not None and sprt.status(done.values()).stopped:
        pending = []  # decided by the games already played
    if play is not None or not pending:
        return await _run(t, progress, play or run_match, done, pending, sprt)
    async with open_executor(t, len(pending)) as executor:  # local workers or a Dask cluster
        if isinstance(executor, ChunkExecutor):  # a Dask cluster: many games per task
            return await _run_chunked(dataclasses.replace(t, jobs=executor.jobs), progress, executor, done, pending,
                                      sprt)
        return await _run(dataclasses.replace(t, jobs=executor.jobs), progress, executor.play, done, pending, sprt,
                          lambda game: executor.fresh_for(game.seed, t.bots(game)),
                          lambda game: executor.wait_fresh(game.seed, t.bots(game)))


async def _run(
    t: Tournament, progress: ProgressSink | None, play: PlayFn,
    done: dict[int, GameResult], pending: list[ScheduledGame], sprt: SprtRun | None = None,
    fresh: Callable[[ScheduledGame], bool] = lambda game: True,
    wait_fresh: Callable[[ScheduledGame], Awaitable[None]] | None = None,
) -> TournamentRun:
    out = OutputDir(t.output)
    progress = progress or NoProgress()
    results = dict(done)
    limiter = trio.CapacityLimiter(t.jobs)
    assert t.secret is not None  # bound by open_output
    try:
        writer = ResultsWriter(out, t.secret)
    except OSError as exc:
        raise OutputError.of(out.results_path, exc) from None
    failure: list[BaseException] = []
    played = 0
    next_standings = time.monotonic() + STANDINGS_EVERY_S
    tlog = log.bind(game=t.game, output=str(out.root))
    tlog.info("tournament_started", total=t.total_games(), done=len(done), jobs=t.jobs)
    progress.start(total=t.total_games(), done=len(done),
                   faults=sum(r.fault is not None for r in done.values()))

    async def play_one(game: ScheduledGame, token: object, cancel: trio.CancelScope) -> None:
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                limiter.release_on_behalf_of(token)

        try:
            await play_and_record(game, release, cancel)
        finally:
            release()

    async def play_and_record(game: ScheduledGame, release: Callable[[], None], cancel: trio.CancelScope) -> None:
        nonlocal played, next_standings
        record = out.record_path(game.id)
        try:
            match = await play(
                t.game, t.options, t.bots(game), seed=game.seed, record_path=record,
                limits=t.limits, stderr_dir=out.stderr_dir(game.id), hide=t.hidden_paths(),
            )
        except Exception as exc:
            # The user's to fix (a full disk; an executor's worker that lacks a bot): stop, and say so.
            if (full := user_fault_in(exc)) is not None:
                failure.append(full)
                cancel.cancel()
                return
            failure.append(TournamentError(f"game {game.id}: {type(exc).__name__}: {exc}"))
            failure[-1].__cause__ = exc
            cancel.cancel()
            return
        finally:
            # The bots are gone: the next game may start while this one's
            # result is made durable (at most `jobs` results wait on the writer).
            # An SPRT decides on recorded results: its next game waits for this one's.
            if sprt is None:
                release()
        result = GameResult.from_match(game, match, record.relative_to(out.root).as_posix())
        del match  # its public entries can be large; drop them before waiting on the writer
        with trio.CancelScope(shield=True):  # a finished game is always recorded
            try:
                result = await writer.append(result)
            except OSError as exc:  # a full disk: the line may be torn; a resume cuts it and replays the game
                failure.append(OutputError.of(out.results_path, exc))
                cancel.cancel()
                return
        results[game.id] = result
        release()
        played += 1
        progress.advance(result)
        if time.monotonic() >= next_standings:  # standings so far, for whoever watches the directory
            next_standings = math.inf  # one write at a time
            with trio.CancelScope(shield=True):
                try:
                    await trio.to_thread.run_sync(write_current_standings, t, dict(results), sprt)
                except OutputError as exc:
                    failure.append(exc)
                    cancel.cancel()
                    return
            next_standings = time.monotonic() + STANDINGS_EVERY_S

    def should_stop() -> bool:
        return sprt is not None and sprt.status(results.values()).stopped

    standings: Standings | None = None
    finished = False
    try:
        # The seatings of one deal never run at once (see _dispatch).
        await _dispatch(pending, limiter, play_one, should_stop, fresh, wait_fresh, apart=lambda game: game.deal_key)
        finished = not failure
    finally:
        writer.close()
        progress.finish()
        # Stopped, failed or done: the standings files match results.jsonl
        # (unless the disk is full: then they are written by the next run).
        with trio.CancelScope(shield=True):
            try:
                standings = await trio.to_thread.run_sync(
                    lambda: write_current_standings(t, dict(results), sprt, finished=finished))
            except OutputError as exc:
                failure.append(exc)
    if failure:
        first = failure[0]
        if isinstance(first, OutputError):  # nothing finished is lost: say how to go on
            raise OutputError(f"{first}; the {len(results)} finished games are kept in {out.results_path}: "
                              "run the same command again to resume") from None
        raise first
    assert standings is not None

    tlog.info("tournament_finished", played=played, resumed=len(done))
    return TournamentRun(results=results, resumed=len(done), played=played, standings=standings)


async def _dispatch(
    pending: list[ScheduledGame],
    limiter: trio.CapacityLimiter,
    play_one: Callable[[ScheduledGame, object, trio.CancelScope], Awaitable[None]],
    should_stop: Callable[[], bool] = lambda: False,
    fresh: Callable[[ScheduledGame], bool] = lambda game: True,
    wait_fresh: Callable[[ScheduledGame], Awaitable[None]] | None = None,
    apart: Callable[[ScheduledGame], Hashable] | None = None,
) -> None:
    """Start the pending games in order, at most as many at once as ``limiter``
    allows, until ``should_stop()`` says no more are needed (asked before each).

    One exception to the order: when ``fresh(game)`` says the next game would
    go where its bots have played its deal (a long-lived process never plays a
    deal twice, so it would need new processes: seconds for a bot that loads a
    model), the first fresh one of the next few starts first.  A game lets at
    most ``limiter.total_tokens`` (the games in flight) go ahead of it, so
    none starts more than that many places late; one that has waited so long
    starts at once (the workers are uneven: new processes, once, are cheaper
    than waiting on the slow one every deal).  When none of the next few is
    fresh (the run's last games), the next one waits, with ``wait_fresh``, for a
    worker that has not played its deal (at most the rest of one game).

    ``apart``: games with the same key never run at the same time (the
    tournament passes the deal: the seatings of one duplicate deal, where one
    entrant holds both sides' cards, so any channel between two running bots
    nobody has found yet has no live partner that knows the other hands).  A
    game whose twin is among the last ``jobs - 1`` started is passed over like a
    stale one, within the same bound (so the order depends on the schedule
    only); a game picked while its twin still plays waits for it."""
    queue = collections.deque(pending)
    # The games in play, by their place's token: a game's bots are gone once it gives its
    # place back (the runner does so before writing its result), or at the latest when it ends.
    in_play: dict[object, Hashable] = {}
    finished = trio.Event()  # set when a game in play ends (a fresh event after each wait)
    # Which game goes next depends only on the order games started (so the same schedule
    # starts in the same order every time): a game is passed over while its twin is among
    # the last jobs - 1 started, the games that may be in play beside it.
    recent: collections.deque[Hashable] = collections.deque(maxlen=max(0, int(limiter.total_tokens) - 1))

    def free(game: ScheduledGame) -> bool:
        return apart is None or apart(game) not in recent

    def twin_in_play(game: ScheduledGame) -> bool:
        if apart is None:
            return False
        held = set(limiter.statistics().borrowers)
        for gone in [t for t in in_play if t not in held]:
            del in_play[gone]
        return apart(game) in in_play.values()

    async def play_apart(game: ScheduledGame, token: object, cancel: trio.CancelScope) -> None:
        nonlocal finished
        try:
            await play_one(game, token, cancel)
        finally:
            in_play.pop(token, None)
            finished.set()
            finished = trio.Event()

    passed: dict[int, int] = {}  # game id: how many later games started before it
    most = max(1, int(limiter.total_tokens))
    try:
        async with trio.open_nursery() as nursery:
            # One loop hands out the places in game-id order (tasks waiting on
            # a limiter would be woken in Trio's deliberately shuffled order).
            while queue:
                token = object()
                await limiter.acquire_on_behalf_of(token)
                if should_stop():
                    limiter.release_on_behalf_of(token)
                    break
                window = list(itertools.islice(queue, most + 1))
                due = next((i for i, g in enumerate(window) if passed.get(g.id, 0) >= most), None)
                first_free = next((i for i, g in enumerate(window) if free(g)), 0)
                first_fresh = None if due is not None else next(
                    (i for i, g in enumerate(window) if fresh(g) and free(g)), None)
                pick = due if due is not None else first_fresh if first_fresh is not None else first_free
                for g in window[:pick]:
                    passed[g.id] = passed.get(g.id, 0) + 1
                game = window[pick]
                del queue[pick]
                passed.pop(game.id, None)
                if due is None and first_fresh is None and wait_fresh is not None:
                    await wait_fresh(game)  # none of the next few is fresh: the run's last games
                if apart is None:
                    nursery.start_soon(play_one, game, token, nursery.cancel_scope)
                    continue
                while twin_in_play(game):  # a slow twin: this game waits, in its place in the order
                    # (a place given back wakes nobody here: look again soon)
                    with trio.move_on_after(APART_POLL_S):
                        await finished.wait()
                recent.append(apart(game))
                in_play[token] = apart(game)
                nursery.start_soon(play_apart, game, token, nursery.cancel_scope)
    except BaseExceptionGroup as group:
        # Ctrl-C arrives wrapped by the nursery; the caller wants it plain.
        if group.subgroup(KeyboardInterrupt) is not None:
            raise KeyboardInterrupt from None
        raise


async def _run_chunked(
    t: Tournament, progress: ProgressSink | None, executor: ChunkExecutor,
    done: dict[int, GameResult], pending: list[ScheduledGame], sprt: SprtRun | None = None,
) -> TournamentRun:
    """``_run`` for an executor that plays chunks of whole duplicate units (Dask):
    the chunks' games reach this process as compact results, once their records
    and stderr logs are in the output folder; this process alone writes
    ``results.jsonl`` (with the MACs: the tournament secret never leaves it), one
    line per game id however often a chunk was played, and the standings."""
    out = OutputDir(t.output)
    progress = progress or NoProgress()
    results = dict(done)
    assert t.secret is not None  # bound by open_output
    try:
        writer = ResultsWriter(out, t.secret)
    except OSError as exc:
        raise OutputError.of(out.results_path, exc) from None
    played = 0
    next_standings = time.monotonic() + STANDINGS_EVERY_S
    tlog = log.bind(game=t.game, output=str(out.root))
    tlog.info("tournament_started", total=t.total_games(), done=len(done), jobs=t.jobs, batch=t.batch)
    progress.start(total=t.total_games(), done=len(done), faults=sum(r.fault is not None for r in done.values()))
    by_id = {g.id: g for g in pending}
    hidden = t.hidden_paths()
    seen: list[cluster_checks.Game] = []  # this run's games, by the worker that played them

    def jobs_for(chunk: Chunk) -> list[dict]:
        return [{**make_job(t.game, t.options, t.bots(g), seed=g.seed, record_path=out.record_path(g.id),
                            limits=t.limits, stderr_dir=out.stderr_dir(g.id), hide=hidden), "id": g.id}
                for g in chunk.games]

    async def deliver(chunk: Chunk, worker: str, games: list[tuple[int, MatchResult]]) -> None:
        nonlocal played, next_standings
        fresh: list[GameResult] = []
        for game_id, match in games:
            if game_id in results or game_id in {r.game_id for r in fresh}:
                continue  # a chunk played twice: its games are written once
            record = out.record_path(game_id)
            fresh.append(GameResult.from_match(by_id[game_id], match, record.relative_to(out.root).as_posix()))
        with trio.CancelScope(shield=True):  # finished games are always recorded
            try:
                written = await writer.append_many(fresh)
            except OSError as exc:  # a full disk: the line may be torn; a resume cuts it and replays the game
                raise OutputError.of(out.results_path, exc) from None
        for result in written:
            results[result.game_id] = result
            played += 1
            first = result.teams.index(result.pairing[0]) if result.pairing[0] in result.teams else -1
            seen.append(cluster_checks.Game(worker, result.pairing, result.status == "win" and first in result.winners,
                                            result.fault is not None))
            progress.advance(result)
        if time.monotonic() >= next_standings:
            next_standings = math.inf
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(write_current_standings, t, dict(results), sprt)
            next_standings = time.monotonic() + STANDINGS_EVERY_S

    def should_stop() -> bool:
        return sprt is not None and sprt.status(results.values()).stopped

    def note(line: str) -> None:
        tlog.warning("dask_note", note=line)
        print(f"referee: {line}", file=sys.stderr, flush=True)

    planner = ChunkPlanner(pending, t.batch)
    if hasattr(progress, "cluster"):  # the live display shows the workers and chunks
        progress.cluster = lambda: executor.chunk_status
    standings: Standings | None = None
    finished = False
    failure: OutputError | None = None
    try:
        await executor.play_chunks(planner, jobs_for, deliver, should_stop, audit=t.audit, seed=t.seed, note=note)
        finished = True
    except OutputError as exc:
        failure = exc
    finally:
        writer.close()
        progress.finish()
        cluster = cluster_checks.cluster_report(seen, executor.audited, executor.mismatches, executor.audit_skipped)
        with trio.CancelScope(shield=True):
            try:
                await trio.to_thread.run_sync(write_atomic, out.root / CLUSTER_FILE,
                                              (json.dumps(cluster, indent=2) + "\n").encode())
                standings = await trio.to_thread.run_sync(
                    lambda: write_current_standings(t, dict(results), sprt, finished=finished))
            except OSError as exc:
                if failure is None:
                    raise OutputError.of(out.root / CLUSTER_FILE, exc) from None
            except OutputError:
                if failure is None:
                    raise
    if failure is not None:
        raise OutputError(f"{failure}; the {len(results)} finished games are kept in {out.results_path}: "
                          "run the same command again to resume") from None
    assert standings is not None
    tlog.info("tournament_finished", played=played, resumed=len(done))
    return TournamentRun(results=results, resumed=len(done), played=played, standings=standings, cluster=cluster)
