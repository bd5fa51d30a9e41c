"""The output directory of a tournament: its layout, opening it (or reopening
it to resume), its secret, and the results file (appending a line, and
deciding on resume which lines to trust).

Output directory::

    secret               the tournament secret (hex, mode 0600): deal seeds and result MACs need it
    tournament.json      the resolved config (what a resume must match); never the secret
    results.jsonl        one line per finished game, appended and fsync'ed, each with its MAC
    results.rejected.jsonl  lines a resume refused (unreadable, forged, stale record), kept for a look
    records/NNNNNN.jsonl the match record of game NNNNNN
    stderr/NNNNNN/       each seat's stderr (empty logs are removed)
    standings.json, standings.csv   the standings so far (``standings_files``): rewritten every
                         runner.STANDINGS_EVERY_S during a run, and at its end
    cluster.json         a Dask run's per-worker games, faults, homogeneity checks and audits (its
                         last invocation's; docs/distributed.md); never part of the standings
    .referee-shared-output  the token by which --shared-output checks the workers see this folder

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
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import hmac
import json
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from referee.inputs import open_input, parse_json, read_input
from referee.logging import structlog

from .config import ConfigError, Tournament, describe_differences, new_secret, parse_secret
from .durable import create_private, fsync_dir, fsync_file, write_atomic
from .results import GameResult, ParsedResults, ResultLine, SequenceCheck, check_sequence, parse_results, read_results
from .schedule import Shape, growth_problems

log = structlog.get_logger("referee.tournament")

CONFIG_FILE = "tournament.json"
RESULTS_FILE = "results.jsonl"
REJECTED_FILE = "results.rejected.jsonl"
SECRET_FILE = "secret"


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
    sequence: SequenceCheck | None = None  # what the lines' seq numbers say (deleted lines)


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
    check_no_links(out)

    identity = t.identity()
    resuming = out.config_path.exists()
    grown = False
    if resuming:
        history, grown = _grown_history(out, t)
        t = t.with_history(history)
    else:
        # A secret alone is a first run stopped before tournament.json was written.
        strangers = [p.name for p in out.root.iterdir() if not p.name.startswith(".") and p.name != SECRET_FILE]
        if strangers:
            raise ConfigError(
                f"output directory {out.root} is not empty and holds no {CONFIG_FILE}; "
                f"choose an empty or new directory")
    t = t.with_secret(_open_secret(out, t.secret, resuming=resuming))
    if grown or not resuming:
        if grown:
            log.info("tournament_grown", output=str(out.root), shape=t.shapes()[-1].to_json(),
                     total=t.total_games())
        write_atomic(out.config_path, _json_bytes({"identity": identity, "resolved": t.to_json(),
                                                   "history": [shape.to_json() for shape in t.shapes()]}))

    if not out.results_path.exists():
        return OpenedOutput(t, {}, [])
    parsed = read_results(out.results_path, secret=t.secret)
    done, rejected = _accept_results(t, out, parsed)
    if rejected:
        _set_aside(out, parsed, rejected)
    elif parsed.dropped:
        fd = os.open(out.results_path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.ftruncate(fd, parsed.good_bytes)
            os.fsync(fd)
        finally:
            os.close(fd)
    if parsed.dropped:
        log.warning("results_tail_cut", path=str(out.results_path), lines=parsed.dropped)
    assert t.secret is not None  # bound above
    moved = {line.number for line, _ in rejected}  # now in the rejected file, counted from there
    sequence = results_sequence(out, [line for line in parsed.lines if line.number not in moved], t.secret)
    games = len(t.schedule())
    problems = []
    if not sequence.ok:
        log.info("results_lines_deleted", path=str(out.results_path), lost=sequence.lost,  # (the line below says it)
                 missing=list(sequence.missing[:100]))
        problems.append(f"{out.results_path}: {sequence.describe()}; their games will be played again "
                        f"(the gap stays in the file: every resume and report names it)")
    for line, problem in rejected:
        game = line.claimed_game
        replay = game is not None and 0 <= game < games and game not in done
        log.info("result_rejected", path=str(out.results_path), line=line.number, game=game, problem=problem,
                 replayed=replay)
        problems.append(
            f"{out.results_path} line {line.number}{f' (game {game})' if game is not None else ''}: {problem}; "
            f"moved to {REJECTED_FILE}{f', game {game} will be played again' if replay else ''}")
    return OpenedOutput(t, done, problems, sequence)


def set_aside_results(out: OutputDir, secret: bytes) -> list[ResultLine]:
    """The lines a resume moved to ``results.rejected.jsonl``, judged again under ``secret``
    (an authentic line whose record was missing or altered, or a rejected one): moved and
    reported, not deleted, so the ``seq`` they carry or claim counts as present."""
    if not out.rejected_path.exists() and not out.rejected_path.is_symlink():
        return []
    data = read_input(out.rejected_path, "results file", ConfigError)
    raws = []
    for text in data.splitlines():
        try:
            entry = json.loads(text)
            raws.append(entry["raw"].encode("utf-8", "surrogateescape") + b"\n")
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # not ours to judge: only authentic lines count
    return list(parse_results(b"".join(raws), secret=secret).lines)


def results_sequence(out: OutputDir, lines: Sequence[ResultLine], secret: bytes) -> SequenceCheck:
    """``check_sequence`` over the ``lines`` of ``results.jsonl`` (parsed under ``secret``) and
    those set aside; remembered for the ``ResultsWriter`` that follows."""
    every = [*lines, *set_aside_results(out, secret)]
    check = check_sequence([line.result for line in every if line.result is not None],
                           [line.claimed_seq for line in every if line.result is None and line.claimed_seq is not None])
    _next_seq[out.results_path] = (_stat_key(out.results_path), check.next_seq)
    return check


#: results.jsonl -> ((size, mtime), next seq) as ``open_output`` found it, so the writer
#: that follows does not parse the file again.
_next_seq: dict[Path, tuple[tuple[int, int] | None, int]] = {}


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def _next_sequence(out: OutputDir, secret: bytes) -> int:
    known = _next_seq.get(out.results_path)
    if known is not None and known[0] == _stat_key(out.results_path):
        return known[1]
    exists = out.results_path.exists() or out.results_path.is_symlink()
    data = read_input(out.results_path, "results file", ConfigError) if exists else b""
    return results_sequence(out, parse_results(data, secret=secret).lines, secret).next_seq


#: The folders of an output directory that hold one entry per game: a folder of files, or files.
_GAME_FOLDERS = {"records": "file", "stderr": "folder"}
#: The files a run reads or writes at the top of an output directory: never anything but a regular
#: file (a folder named standings.json would stop the run only at its end, when it is written).
_RUN_FILES = frozenset({CONFIG_FILE, RESULTS_FILE, REJECTED_FILE, SECRET_FILE, "standings.json",
                        "standings.csv", "report.html"})


def check_no_links(out: OutputDir) -> None:
    """Refuse (``ConfigError``) an output directory in which a write could leave it: a symbolic link
    or anything but a regular file where the run writes a file, anything but a real folder where it
    writes into one (``records -> /etc`` would put records in /etc).  Checked when the directory is
    opened, before anything is read or written; the writes themselves do not follow a link at the
    last step either (``durable``, ``ResultsWriter``).  The directory itself may be a link: the user
    named it."""

    def refuse(path: Path, what: str) -> ConfigError:
        return ConfigError(f"{path} is {what}; an output directory holds only regular files and folders "
                           f"(a write there must not leave it): remove it, or choose another output directory")

    def kind(path: Path, st: os.stat_result) -> str:
        if stat.S_ISLNK(st.st_mode):
            return f"a symbolic link (to {os.readlink(path)})"
        return "not a regular file" if not stat.S_ISDIR(st.st_mode) else "a folder"

    try:
        with os.scandir(out.root) as entries:
            top = list(entries)
        for entry in top:
            path = Path(entry.path)
            st = entry.stat(follow_symlinks=False)
            want = _GAME_FOLDERS.get(entry.name)
            if want is not None:
                if not stat.S_ISDIR(st.st_mode):
                    raise refuse(path, kind(path, st))
                _check_folder(path, want, refuse, kind)
            elif not stat.S_ISREG(st.st_mode) and (entry.name in _RUN_FILES or not stat.S_ISDIR(st.st_mode)):
                raise refuse(path, kind(path, st))
    except OSError as exc:
        raise ConfigError(f"cannot read output directory {out.root}: {exc.strerror or exc}") from None


def _check_folder(folder: Path, want: str, refuse: Any, kind: Any) -> None:
    """Every entry of ``folder`` a regular file (``want == "file"``), or a real folder of regular files."""
    with os.scandir(folder) as entries:
        for entry in entries:
            path = Path(entry.path)
            st = entry.stat(follow_symlinks=False)
            if want == "file" and not stat.S_ISREG(st.st_mode):
                raise refuse(path, kind(path, st))
            if want == "folder":
                if not stat.S_ISDIR(st.st_mode):
                    raise refuse(path, kind(path, st))
                _check_folder(path, "file", refuse, kind)


def _open_secret(out: OutputDir, given: bytes | None, *, resuming: bool) -> bytes:
    """The directory's secret: read (and compared with ``given``), or created."""
    path = out.secret_path
    if path.exists():
        try:
            text = read_input(path, "secret file", ConfigError).decode("ascii")
        except UnicodeDecodeError:
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
    create_private(path, (secret.hex() + "\n").encode("ascii"))
    return secret


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
    except ConfigError as exc:
        return f"its record {name} is unusable ({str(exc).removeprefix(f'{path}: ')})"
    except OSError as exc:
        return f"its record {name} is unreadable ({exc.strerror})"
    if digest != result.record_sha256:
        return f"its record {name} does not match the SHA-256 in the line (altered after the game)"
    return None


def _file_sha256(path: Path) -> str:
    """The SHA-256 of a game's record: a regular file within a record's cap (``ConfigError`` if not:
    a FIFO or device put in its place is refused, not waited on or read forever)."""
    with open_input(path, "record", ConfigError) as f:
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
    fd = os.open(out.rejected_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, side)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(out.root)
    gone = {line.number for line, _ in rejected}
    write_atomic(out.results_path, b"".join(line.raw for line in parsed.lines if line.number not in gone))


#: What may change between the runs of one output directory: the shape (see
#: ``schedule.Shape``), and the entrants and deal seeds as far as they only grow.
_GROWABLE = ("entrants", "games_per_pairing", "rounds", "format", "challengers", "deal_seeds")


def _grown_history(out: OutputDir, t: Tournament) -> tuple[tuple[Shape, ...], bool]:
    """The shapes the directory's run went through, ending with ``t``'s when
    ``t`` grows it (then True: tournament.json must be rewritten).  Refused
    (``ConfigError`` naming every change) when ``t`` would change or drop a
    game the run has scheduled: another seed, game, options or limits, an
    entrant changed or removed, other deal seeds, fewer deals or pairings."""
    stored_doc = parse_json(read_input(out.config_path, "tournament record", ConfigError),
                            str(out.config_path), ConfigError)
    try:
        stored = stored_doc["identity"]
        history = tuple(Shape.from_json(s) for s in stored_doc["history"]) if "history" in stored_doc else (
            Shape(tuple(e["name"] for e in stored["entrants"]),
                  int(stored["games_per_pairing"]) * int(stored.get("rounds", 1)),
                  tuple(stored.get("challengers", ()))),)
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigError(f"{out.config_path} is unreadable; choose another output directory") from None
    identity = json.loads(json.dumps(t.identity()))
    if stored == identity:
        return history, False
    changes = describe_differences({k: v for k, v in stored.items() if k not in _GROWABLE},
                                   {k: v for k, v in identity.items() if k not in _GROWABLE})
    now = {e["name"]: e for e in identity["entrants"]}
    for entrant in stored["entrants"]:
        name = entrant["name"]
        if name in now:
            changes.extend(describe_differences(entrant, now[name], f"entrant {name!r}"))
    old_seeds, new_seeds = stored.get("deal_seeds"), identity.get("deal_seeds")
    if (old_seeds is None) != (new_seeds is None):
        changes.append("a deals file was " + ("added" if old_seeds is None else "removed"))
    elif old_seeds is not None and new_seeds is not None:
        changes.extend(f"deal {d} of the deals file was {a}, now {b}"
                       for d, (a, b) in enumerate(zip(old_seeds, new_seeds, strict=False)) if a != b)
    last = history[-1]
    kept = tuple(n for n in last.names if n in t.names)  # the order of the games already scheduled
    shape = Shape((*kept, *(n for n in t.names if n not in kept)), t.deals_per_pairing, t.challengers)
    changes.extend(growth_problems(last, shape, t.num_teams))
    if changes:
        shown = "; ".join(changes[:4]) + (f"; and {len(changes) - 4} more" if len(changes) > 4 else "")
        raise ConfigError(
            f"{out.root} holds a tournament with another config, refusing to resume: {shown} "
            f"(a run may only grow: more games_per_pairing or rounds, more entrants or challengers; "
            f"restore the config or choose another output directory)")
    return (history if shape == last else (*history, shape)), True


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _tidy_stderr(directory: Path) -> None:
    """Drop empty stderr logs (and the folder when nothing is left)."""
    try:
        for p in directory.iterdir():
            if p.stat().st_size == 0:
                p.unlink()
        directory.rmdir()
    except OSError:
        pass  # not empty, or already gone


class ResultsWriter:
    """Appends result lines: one ``write`` of a whole line, then ``fsync``.

    The game's record is fsync'ed first, so a line never points to a record
    that a power cut could still lose; the line carries the record's SHA-256
    and is authenticated with the tournament secret."""

    def __init__(self, out: OutputDir, secret: bytes) -> None:
        self.out = out
        self.secret = secret
        self.seq = _next_sequence(out, secret)  # the next line's seq (results.check_sequence)
        self._lock = trio.Lock()
        self._fd = os.open(out.results_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                           0o644)
        fsync_dir(out.root)

    def _append_sync(self, result: GameResult, sync: bool = True) -> GameResult:
        record = self.out.record_path(result.game_id)
        fsync_file(record)
        _tidy_stderr(self.out.stderr_dir(result.game_id))
        result = dataclasses.replace(result, record_sha256=_file_sha256(record))
        line = result.to_line(self.secret, self.seq)
        written = os.write(self._fd, line)
        if written != len(line):  # a regular file short-writes only when the disk is full
            raise OSError(f"short write to {self.out.results_path}")
        if sync:
            os.fsync(self._fd)
        self.seq += 1
        return dataclasses.replace(result, seq=self.seq - 1)

    def _append_many_sync(self, results: list[GameResult]) -> list[GameResult]:
        written = [self._append_sync(r, sync=False) for r in results]
        os.fsync(self._fd)
        return written

    async def append_many(self, results: list[GameResult]) -> list[GameResult]:
        """``append`` for several results (a Dask chunk's): one thread hop and one ``fsync``
        of the results file for all (each record is still made durable before its line)."""
        async with self._lock:
            return await trio.to_thread.run_sync(self._append_many_sync, results)

    async def append(self, result: GameResult) -> GameResult:
        """Write ``result``'s line; returns the result as written (with its record's hash)."""
        async with self._lock:
            return await trio.to_thread.run_sync(self._append_sync, result)

    def close(self) -> None:
        os.close(self._fd)
