"""Play a tournament: up to ``jobs`` games at once, durable results, resume.

Output directory::

    secret               the tournament secret (hex, mode 0600): deal seeds and result MACs need it
    tournament.json      the resolved config (what a resume must match); never the secret
    results.jsonl        one line per finished game, appended and fsync'ed, each with its MAC
    results.rejected.jsonl  lines a resume refused (unreadable, forged, stale record), kept for a look
    records/NNNNNN.jsonl the match record of game NNNNNN
    stderr/NNNNNN/       each seat's stderr (empty logs are removed)
    standings.json, standings.csv   the standings so far: rewritten every STANDINGS_EVERY_S during a run, and at its end

A game counts as played once an authentic line for it is in
``results.jsonl`` and its record file still has the SHA-256 that line names;
nothing else is trusted on resume.  A game that was running when the referee
died left at most a partial record and no result line: it is played again from
scratch (its record is overwritten).  A torn last line of ``results.jsonl`` is
cut.  Any other line that is unreadable, fails its MAC, or points to a missing
or altered record is rejected: moved to ``results.rejected.jsonl`` (with the
reason), reported, and its game played again; the lines around it are kept.
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

import contextlib
import csv
import dataclasses
import datetime as _dt
import hashlib
import hmac
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

from .config import ConfigError, Tournament, default_jobs, describe_differences, new_secret, parse_secret
from .results import GameResult, ParsedResults, ResultLine, parse_results
from .schedule import ScheduledGame
from .standings import Standings, compute_standings
from .workers import open_worker_pool

log = structlog.get_logger("referee.tournament")

CONFIG_FILE = "tournament.json"
STANDINGS_EVERY_S = 10.0  # during a run, standings.json / .csv are rewritten at most this often
RESULTS_FILE = "results.jsonl"
REJECTED_FILE = "results.rejected.jsonl"
SECRET_FILE = "secret"
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

    @property
    def rejected_path(self) -> Path:
        return self.root / REJECTED_FILE

    @property
    def secret_path(self) -> Path:
        return self.root / SECRET_FILE

    def record_path(self, game_id: int) -> Path:
        return self.root / "records" / f"{game_id:06d}.jsonl"

    def stderr_dir(self, game_id: int) -> Path:
        return self.root / "stderr" / f"{game_id:06d}"


# ---------------------------------------------------------------------------
# Opening the output directory (synchronous: it happens before any game).


@dataclass(frozen=True, slots=True)
class OpenedOutput:
    tournament: Tournament  # bound to the directory's secret: its schedule has the deal seeds
    done: dict[int, GameResult]  # games already finished, by id
    problems: list[str]  # one line per result line rejected, for the user


def open_output(t: Tournament) -> OpenedOutput:
    """Create the output directory, or reopen it to resume.  Raises
    ``ConfigError`` when the directory cannot be used: unwritable, not ours,
    holding a tournament with another config, or started with another secret
    than ``t.secret`` (when given).  Rejected result lines are set aside and
    reported in ``problems`` (and the log); their games are not ``done``."""
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
    resuming = out.config_path.exists()
    if resuming:
        _check_same_tournament(out, identity)
    else:
        # A secret alone is a first run stopped before tournament.json was written.
        strangers = [p.name for p in out.root.iterdir() if not p.name.startswith(".") and p.name != SECRET_FILE]
        if strangers:
            raise ConfigError(
                f"output directory {out.root} is not empty and holds no {CONFIG_FILE}; "
                f"choose an empty or new directory")
    t = t.with_secret(_open_secret(out, t.secret, resuming=resuming))
    if not resuming:
        write_atomic(out.config_path, _json_bytes({"identity": identity, "resolved": t.to_json()}))

    if not out.results_path.exists():
        return OpenedOutput(t, {}, [])
    parsed = parse_results(out.results_path.read_bytes(), secret=t.secret)
    done, rejected = _accept_results(t, out, parsed)
    if rejected:
        _set_aside(out, parsed, rejected)
    elif parsed.dropped:
        with open(out.results_path, "r+b") as f:
            f.truncate(parsed.good_bytes)
            f.flush()
            os.fsync(f.fileno())
    if parsed.dropped:
        log.warning("results_tail_cut", path=str(out.results_path), lines=parsed.dropped)
    games = len(t.schedule())
    problems = []
    for line, problem in rejected:
        game = line.claimed_game
        replay = game is not None and 0 <= game < games and game not in done
        log.info("result_rejected", path=str(out.results_path), line=line.number, game=game, problem=problem,
                 replayed=replay)
        problems.append(
            f"{out.results_path} line {line.number}{f' (game {game})' if game is not None else ''}: {problem}; "
            f"moved to {REJECTED_FILE}{f', game {game} will be played again' if replay else ''}")
    return OpenedOutput(t, done, problems)


def _open_secret(out: OutputDir, given: bytes | None, *, resuming: bool) -> bytes:
    """The directory's secret: read (and compared with ``given``), or created."""
    path = out.secret_path
    if path.exists():
        try:
            text = path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            raise ConfigError(f"{path} is unreadable; choose another output directory") from None
        stored = parse_secret(text, str(path))
        if given is not None and not hmac.compare_digest(given, stored):
            raise ConfigError(
                f"{out.root} was started with another secret, refusing to resume "
                f"(give its own secret, or none to use {path}, or choose another output directory)")
        return stored
    if resuming:
        raise ConfigError(
            f"{out.root} holds a tournament but no {SECRET_FILE} file (written by an older referee, "
            f"or the file was removed); choose another output directory")
    secret = given if given is not None else new_secret()
    _create_private(path, (secret.hex() + "\n").encode("ascii"))
    return secret


def _create_private(path: Path, data: bytes) -> None:
    """Write a new file readable by its owner only (mode 0600, whatever the
    umask), atomically and durably."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _accept_results(
    t: Tournament, out: OutputDir, parsed: ParsedResults,
) -> tuple[dict[int, GameResult], list[tuple[ResultLine, str]]]:
    """The finished games, and the lines rejected with the reason.  An
    authentic line (its MAC checks) for a game not in the schedule means the
    directory mixes tournaments: refused with ``ConfigError``, as a changed
    config is.  A forged line is merely rejected, whatever it claims."""
    games = t.schedule()
    done: dict[int, GameResult] = {}
    rejected: list[tuple[ResultLine, str]] = []
    for line in parsed.lines:
        result = line.result
        if result is None:
            rejected.append((line, line.problem or "rejected"))
            continue
        if not (0 <= result.game_id < len(games)) or not result.matches(games[result.game_id]):
            raise ConfigError(
                f"{out.results_path}: game {result.game_id} does not belong to this tournament's schedule")
        if result.game_id in done:
            continue  # a duplicate: the first line wins
        problem = _record_problem(out, result)
        if problem is not None:
            rejected.append((line, problem))
        else:
            done[result.game_id] = result
    return done, rejected


def _record_problem(out: OutputDir, result: GameResult) -> str | None:
    """Why the record file of a finished game cannot be trusted, if it cannot."""
    path = out.record_path(result.game_id)
    name = path.relative_to(out.root).as_posix()
    try:
        digest = _file_sha256(path)
    except FileNotFoundError:
        return f"its record {name} is missing"
    except OSError as exc:
        return f"its record {name} is unreadable ({exc.strerror})"
    if digest != result.record_sha256:
        return f"its record {name} does not match the SHA-256 in the line (altered after the game)"
    return None


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _set_aside(out: OutputDir, parsed: ParsedResults, rejected: list[tuple[ResultLine, str]]) -> None:
    """Append the rejected lines to ``results.rejected.jsonl``, then replace
    ``results.jsonl`` with the lines kept (the torn tail, if any, is cut).

    Each side line is ``{"rejected_at", "line", "game_id", "problem", "raw"}``;
    ``raw`` is the line without its newline, undecodable bytes escaped so
    that ``raw.encode("utf-8", "surrogateescape")`` gives them back exactly."""
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    side = b"".join(
        (json.dumps({"rejected_at": now, "line": line.number, "game_id": line.claimed_game, "problem": problem,
                     "raw": line.raw[:-1].decode("utf-8", "surrogateescape")}) + "\n").encode("ascii")
        for line, problem in rejected)
    with open(out.rejected_path, "ab") as f:
        f.write(side)
        f.flush()
        os.fsync(f.fileno())
    _fsync_dir(out.root)
    gone = {line.number for line, _ in rejected}
    write_atomic(out.results_path, b"".join(line.raw for line in parsed.lines if line.number not in gone))


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
        with contextlib.suppress(OSError):
            tmp.unlink()
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
    standings = compute_standings(t.names, t.num_teams, results.values(), games_total=t.total_games(),
                                  network=t.network_entrants)
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
    that a power cut could still lose; the line carries the record's SHA-256
    and is authenticated with the tournament secret."""

    def __init__(self, out: OutputDir, secret: bytes) -> None:
        self.out = out
        self.secret = secret
        self._lock = trio.Lock()
        self._fd = os.open(out.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        _fsync_dir(out.root)

    def _append_sync(self, result: GameResult) -> GameResult:
        record = self.out.record_path(result.game_id)
        _fsync_file(record)
        _tidy_stderr(self.out.stderr_dir(result.game_id))
        result = dataclasses.replace(result, record_sha256=_file_sha256(record))
        line = result.to_line(self.secret)
        written = os.write(self._fd, line)
        if written != len(line):  # a regular file short-writes only when the disk is full
            raise OSError(f"short write to {self.out.results_path}")
        os.fsync(self._fd)
        return result

    async def append(self, result: GameResult) -> GameResult:
        """Write ``result``'s line; returns the result as written (with its record's hash)."""
        async with self._lock:
            return await trio.to_thread.run_sync(self._append_sync, result)

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
    opened: OpenedOutput | None = None,
) -> TournamentRun:
    """Play every scheduled game not yet in ``results.jsonl``.

    ``opened`` is what ``open_output(t)`` returned, if the caller opened the
    output directory already (to report a bad one before starting);
    ``play`` is the match runner: by default games are played by worker
    processes, one per core (``tournaments.workers``); tests pass a fake or
    ``run_match`` itself to play in this process."""
    if opened is None:
        opened = open_output(t)
    t, done = opened.tournament, opened.done
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
        nonlocal played, next_standings
        record = out.record_path(game.id)
        try:
            match = await play(
                t.game, t.options, t.bots(game), seed=game.seed, record_path=record,
                limits=t.limits, stderr_dir=out.stderr_dir(game.id), hide=t.hidden_paths(),
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
                result = await writer.append(result)
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
