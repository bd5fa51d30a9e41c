"""Play a tournament: up to ``jobs`` games at once, durable results, resume.

Output directory::

    tournament.json      the resolved config (what a resume must match)
    results.jsonl        one line per finished game, appended and fsync'ed
    records/NNNNNN.jsonl the match record of game NNNNNN
    stderr/NNNNNN/       each seat's stderr (empty logs are removed)
    standings.json, standings.csv   the standings so far: rewritten every STANDINGS_EVERY_S during a run, and at its end

A game counts as played once its line is in ``results.jsonl``; nothing else
is trusted on resume.  A game that was running when the referee died left at
most a partial record and no result line: it is played again from scratch
(its record is overwritten).  A torn last line of ``results.jsonl`` is cut.
Since each game's seed comes from the schedule, not from the order games
happen to run or finish in, and standings are computed from the result lines
sorted by game id, a resumed tournament ends with the standings of an
uninterrupted one (given bots that play the same way on the same seed).

Games run as tasks of one nursery, gated by a ``trio.CapacityLimiter`` and
started in game-id order; each task has its game played by a worker process
pinned to a core with its bots (``tournaments.workers``: one worker per core,
several games each when ``jobs`` exceeds the cores).
Results are written from a worker thread (``fsync`` may block for
milliseconds; the event loop keeps serving the other games' bots meanwhile).
A bot's fault is a result like any other; an exception from the match
runner is a referee bug and stops the tournament (finished games are kept).
So does a write the file system refuses (a full disk), as an ``OutputError``
naming the file: finished games stay in ``results.jsonl``, no temporary file
is left, and the next run resumes and writes the standings.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import structlog
import trio

from referee.errors import OutputError, RefereeBug, output_error_in
from referee.match.runner import run_match
from referee.match.types import MatchResult

from .config import ConfigError, Tournament, default_jobs, describe_differences
from .results import GameResult, parse_results
from .schedule import ScheduledGame
from .standings import Standings, compute_standings
from .workers import open_worker_pool

log = structlog.get_logger("referee.tournament")

CONFIG_FILE = "tournament.json"
STANDINGS_EVERY_S = 10.0  # during a run, standings.json / .csv are rewritten at most this often
RESULTS_FILE = "results.jsonl"
PlayFn = Callable[..., Awaitable[MatchResult]]


class TournamentError(RefereeBug):
    """A game failed for a reason that is not a bot's fault: a referee bug."""


class ProgressSink(Protocol):
    def start(self, *, total: int, done: int, faults: int) -> None: ...
    def advance(self, result: GameResult) -> None: ...
    def finish(self) -> None: ...


class NoProgress:
    def start(self, *, total: int, done: int, faults: int) -> None:
        pass

    def advance(self, result: GameResult) -> None:
        pass

    def finish(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class OutputDir:
    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def results_path(self) -> Path:
        return self.root / RESULTS_FILE

    def record_path(self, game_id: int) -> Path:
        return self.root / "records" / f"{game_id:06d}.jsonl"

    def stderr_dir(self, game_id: int) -> Path:
        return self.root / "stderr" / f"{game_id:06d}"


# ---------------------------------------------------------------------------
# Opening the output directory (synchronous: it happens before any game).


def open_output(t: Tournament) -> dict[int, GameResult]:
    """Create the output directory, or reopen it to resume.  Returns the games
    already finished, by id.  Raises ``ConfigError`` when the directory cannot
    be used: unwritable, not ours, or holding a tournament with another config."""
    out = OutputDir(t.output)
    try:
        out.root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create output directory {out.root}: {exc.strerror}") from None
    if not out.root.is_dir():
        raise ConfigError(f"output {out.root} is not a directory")
    if not os.access(out.root, os.W_OK | os.X_OK):
        raise ConfigError(f"output directory {out.root} is not writable")

    identity = t.identity()
    if out.config_path.exists():
        _check_same_tournament(out, identity)
    else:
        strangers = [p.name for p in out.root.iterdir() if not p.name.startswith(".")]
        if strangers:
            raise ConfigError(
                f"output directory {out.root} is not empty and holds no {CONFIG_FILE}; "
                f"choose an empty or new directory")
        write_atomic(out.config_path, _json_bytes({"identity": identity, "resolved": t.to_json()}))

    done: dict[int, GameResult] = {}
    if out.results_path.exists():
        data = out.results_path.read_bytes()
        parsed = parse_results(data)
        if parsed.dropped:
            log.warning("results_tail_cut", path=str(out.results_path), lines=parsed.dropped)
            with open(out.results_path, "r+b") as f:
                f.truncate(parsed.good_bytes)
                f.flush()
                os.fsync(f.fileno())
        games = t.schedule()
        for game_id, result in parsed.results.items():
            if not (0 <= game_id < len(games)) or not result.matches(games[game_id]):
                raise ConfigError(
                    f"{out.results_path}: game {game_id} does not belong to this tournament's schedule")
            done[game_id] = result
    return done


def _check_same_tournament(out: OutputDir, identity: Mapping[str, Any]) -> None:
    try:
        stored = json.loads(out.config_path.read_bytes())["identity"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"{out.config_path} is unreadable; choose another output directory") from None
    if stored != json.loads(json.dumps(identity)):
        changes = describe_differences(stored, identity)
        shown = "; ".join(changes[:4]) + (f"; and {len(changes) - 4} more" if len(changes) > 4 else "")
        raise ConfigError(
            f"{out.root} holds a tournament with another config, refusing to resume: {shown} "
            f"(restore the config or choose another output directory)")


# ---------------------------------------------------------------------------
# Durable writes (run in a worker thread).


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half.

    When the file system refuses (a full disk), the old file stays, the
    temporary one is removed, and ``OutputError`` names ``path`` and the cause."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise OutputError.of(path, exc) from None
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    try:
        with open(path, "rb") as f:
            os.fsync(f.fileno())
    except FileNotFoundError:
        pass


def _tidy_stderr(directory: Path) -> None:
    """Drop empty stderr logs (and the folder when nothing is left)."""
    try:
        for p in directory.iterdir():
            if p.stat().st_size == 0:
                p.unlink()
        directory.rmdir()
    except OSError:
        pass  # not empty, or already gone


# -- standings files ---------------------------------------------------------------

CSV_COLUMNS = [
    "rank", "name", "games", "wins", "draws", "losses", "aborted", "forfeits", "forfeits_by_reason",
    "opponent_forfeits", "win_rate", "win_rate_lo", "win_rate_hi", "score_diff", "score_diff_lo",
    "score_diff_hi", "score_diff_games", "mu", "sigma", "rating",
]


def standings_paths(output: Path) -> tuple[Path, Path]:
    """Where a tournament's standings.json and standings.csv are."""
    return output / "standings.json", output / "standings.csv"


def write_standings(output: Path, standings: Standings) -> tuple[Path, Path]:
    data = standings.to_json()
    json_path, csv_path = standings_paths(output)
    write_atomic(json_path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    write_atomic(csv_path, standings_csv(data).encode("utf-8"))
    return json_path, csv_path


def write_current_standings(t: Tournament, results: Mapping[int, GameResult]) -> Standings:
    """Standings of the games finished so far, written to standings.json / .csv."""
    standings = compute_standings(t.names, t.num_teams, results.values(), games_total=t.total_games())
    write_standings(t.output, standings)
    return standings


def standings_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for e in data["entrants"]:
        wr, sd, rt = e["win_rate"], e["score_diff"], e["rating"]
        reasons = " ".join(f"{k}={v}" for k, v in e["forfeits_by_reason"].items())
        w.writerow([
            e["rank"], e["name"], e["games"], e["wins"], e["draws"], e["losses"], e["aborted"],
            e["forfeits"], reasons, e["opponent_forfeits"],
            _csv(wr["value"]), _csv(wr["lo"]), _csv(wr["hi"]),
            _csv(sd["value"]), _csv(sd["lo"]), _csv(sd["hi"]), sd["games"],
            _csv(rt["mu"]), _csv(rt["sigma"]), _csv(rt["ordinal"]),
        ])
    return buf.getvalue()


def _csv(x: float | None) -> str:
    return "" if x is None else f"{x:.6g}"


class ResultsWriter:
    """Appends result lines: one ``write`` of a whole line, then ``fsync``.

    The game's record is fsync'ed first, so a line never points to a record
    that a power cut could still lose."""

    def __init__(self, out: OutputDir) -> None:
        self.out = out
        self._lock = trio.Lock()
        self._fd = os.open(out.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        _fsync_dir(out.root)

    def _append_sync(self, result: GameResult) -> None:
        _fsync_file(self.out.record_path(result.game_id))
        _tidy_stderr(self.out.stderr_dir(result.game_id))
        line = result.to_line()
        written = os.write(self._fd, line)
        if written != len(line):  # a regular file short-writes only when the disk is full
            raise OSError(f"short write to {self.out.results_path}")
        os.fsync(self._fd)

    async def append(self, result: GameResult) -> None:
        async with self._lock:
            await trio.to_thread.run_sync(self._append_sync, result)

    def close(self) -> None:
        os.close(self._fd)


# ---------------------------------------------------------------------------


@dataclass(slots=True)
class TournamentRun:
    results: dict[int, GameResult]  # every finished game, resumed ones included
    resumed: int  # games found already finished
    played: int  # games played by this run
    standings: Standings


async def run_tournament(
    t: Tournament,
    *,
    progress: ProgressSink | None = None,
    play: PlayFn | None = None,
    done: dict[int, GameResult] | None = None,
) -> TournamentRun:
    """Play every scheduled game not yet in ``results.jsonl``.

    ``done`` is what ``open_output`` returned, if the caller opened the
    output directory already (to report a bad one before starting);
    ``play`` is the match runner: by default games are played by worker
    processes, one per core (``tournaments.workers``); tests pass a fake or
    ``run_match`` itself to play in this process."""
    if done is None:
        done = open_output(t)
    pending = [g for g in t.schedule() if g.id not in done]
    if play is not None or not pending:
        return await _run(t, progress, play or run_match, done, pending)
    workers = min(t.jobs, len(pending), default_jobs())  # one per core at most
    async with open_worker_pool(workers, pin=t.pin_cores, limits=t.limits) as pool:
        return await _run(t, progress, pool.play, done, pending)


async def _run(
    t: Tournament, progress: ProgressSink | None, play: PlayFn,
    done: dict[int, GameResult], pending: list[ScheduledGame],
) -> TournamentRun:
    out = OutputDir(t.output)
    progress = progress or NoProgress()
    results = dict(done)
    limiter = trio.CapacityLimiter(t.jobs)
    try:
        writer = ResultsWriter(out)
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
        nonlocal played, next_standings
        record = out.record_path(game.id)
        try:
            match = await play(
                t.game, t.options, t.bots(game), seed=game.seed, record_path=record,
                limits=t.limits, stderr_dir=out.stderr_dir(game.id),
            )
        except Exception as exc:
            if (full := output_error_in(exc)) is not None:  # a full disk: stop, and say so
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
            limiter.release_on_behalf_of(token)
        result = GameResult.from_match(game, match, record.relative_to(out.root).as_posix())
        del match  # its public entries can be large; drop them before waiting on the writer
        with trio.CancelScope(shield=True):  # a finished game is always recorded
            try:
                await writer.append(result)
            except OSError as exc:  # a full disk: the line may be torn; a resume cuts it and replays the game
                failure.append(OutputError.of(out.results_path, exc))
                cancel.cancel()
                return
        results[game.id] = result
        played += 1
        progress.advance(result)
        if time.monotonic() >= next_standings:  # standings so far, for whoever watches the directory
            next_standings = math.inf  # one write at a time
            with trio.CancelScope(shield=True):
                try:
                    await trio.to_thread.run_sync(write_current_standings, t, dict(results))
                except OutputError as exc:
                    failure.append(exc)
                    cancel.cancel()
                    return
            next_standings = time.monotonic() + STANDINGS_EVERY_S

    standings: Standings | None = None
    try:
        await _dispatch(pending, limiter, play_one)
    finally:
        writer.close()
        progress.finish()
        # Stopped, failed or done: the standings files match results.jsonl
        # (unless the disk is full: then they are written by the next run).
        with trio.CancelScope(shield=True):
            try:
                standings = await trio.to_thread.run_sync(write_current_standings, t, dict(results))
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
) -> None:
    try:
        async with trio.open_nursery() as nursery:
            # One loop hands out the places in game-id order (tasks waiting on
            # a limiter would be woken in Trio's deliberately shuffled order).
            for game in pending:
                token = object()
                await limiter.acquire_on_behalf_of(token)
                nursery.start_soon(play_one, game, token, nursery.cancel_scope)
    except BaseExceptionGroup as group:
        # Ctrl-C arrives wrapped by the nursery; the caller wants it plain.
        if group.subgroup(KeyboardInterrupt) is not None:
            raise KeyboardInterrupt from None
        raise
