"""`referee play GAME --bot CMD ...`: one game between bots."""

from __future__ import annotations

import dataclasses
import math
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from referee.match.bubblewrap import SandboxMode
from referee.match.types import Limits
from referee.text import shown
from referee_cli.errors import UserError
from referee_cli.options import CpuOption, MemoryOption, OpenFilesOption, ProcessesOption

if TYPE_CHECKING:  # the rest is imported where it is used: `referee --help` needs none of it
    from referee.games import Outcome
    from referee.match.types import MatchResult

_DEFAULTS = Limits()

#: ``referee play``'s exit status when the game ended by a forfeit (0: played to its end).
EXIT_FORFEIT = 3


#: Each limit flag: its ``LimitsConfig`` field and how many flag units make one of the field's.
_LIMIT_FLAGS = {
    "--handshake-ms": ("handshake_s", 1000), "--decision-ms": ("decision_s", 1000),
    "--time-bank-ms": ("time_bank_s", 1000), "--memory-mb": ("memory_mb", 1), "--cpu-s": ("cpu_s", 1),
    "--max-processes": ("max_processes", 1), "--max-open-files": ("max_open_files", 1),
    "--max-line-bytes": ("max_line_bytes", 1), "--stderr-keep-bytes": ("stderr_keep_bytes", 1),
}


def limits_from_flags(values: dict[str, int]) -> Limits:
    """The match limits from ``referee play``'s flags, checked by the same model (and
    bounds) as a tournament file's ``[limits]``; a bad value is one ``UserError``."""
    from pydantic import ValidationError

    from tournaments.config import LimitsConfig

    fields: dict[str, Any] = {}
    for flag, value in values.items():
        field, scale = _LIMIT_FLAGS[flag]
        try:
            fields[field] = value if scale == 1 else value / scale
        except OverflowError:  # more digits than a float holds: refused below as not finite
            fields[field] = math.inf if value > 0 else -math.inf
    try:
        return LimitsConfig(**fields).to_limits()
    except ValidationError as exc:
        bad = exc.errors(include_url=False)[0]["loc"][0]
        flag = next(f for f, (name, _) in _LIMIT_FLAGS.items() if name == bad)
        given = str(values[flag])
        given = given if len(given) <= 24 else f"{given[:12]}…({len(given)} digits)"
        raise UserError(f"{flag} must be {_range_text(*_LIMIT_FLAGS[flag])}, got {given}") from None


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _range_text(field: str, scale: int) -> str:
    """``LimitsConfig``'s bounds on ``field`` in flag units: "0 or more and at most 1048576"."""
    from tournaments.config import LimitsConfig

    parts = []
    for bound in LimitsConfig.model_fields[field].metadata:
        if getattr(bound, "ge", None) is not None:
            parts.append("0 or more" if bound.ge == 0 else f"at least {_num(bound.ge * scale)}")
        elif getattr(bound, "gt", None) is not None:
            parts.append(f"more than {_num(bound.gt * scale)}")
        elif getattr(bound, "le", None) is not None:
            parts.append(f"at most {_num(bound.le * scale)}")
    return " and ".join(parts)


def describe_outcome(outcome: Outcome, teams: list[list[int]], names: list[str]) -> str:
    def team_label(t: int) -> str:
        seats = teams[t]
        who = sorted({shown(names[s]) for s in seats})
        return f"team {t} (seats {', '.join(map(str, seats))}: {', '.join(who)})"

    scores = ", ".join(f"team {t}: {s}" for t, s in enumerate(outcome.scores))
    if outcome.status == "win":
        won = " and ".join(team_label(t) for t in outcome.winners)
        return f"{won} {'wins' if len(outcome.winners) == 1 else 'win'} — {scores}"
    if outcome.status == "draw":
        return f"draw — {scores}"
    if outcome.status == "aborted":
        return f"aborted ({outcome.reason}) — no winner"
    seat = outcome.detail.get("seat")
    won = " and ".join(team_label(t) for t in outcome.winners)
    who = shown(names[seat]) if isinstance(seat, int) and 0 <= seat < len(names) else "?"
    return (f"forfeit: seat {seat} ({who}) — {outcome.reason}: "
            f"{shown(outcome.detail.get('message', ''))}; {won} {'wins' if len(outcome.winners) == 1 else 'win'}")


def print_result(result: MatchResult, quiet: bool, wide: bool = False) -> None:
    from referee.games import GAMES
    from referee.match.record import entries_from_dicts
    from referee_cli.common import describe_isolation, make_console, print_score_table

    console = make_console()
    spec = GAMES[result.game]
    spec_teams: dict[int, list[int]] = {}
    for s, _bot in enumerate(result.seats):
        spec_teams.setdefault(spec.team_of(s, result.options), []).append(s)
    teams = [spec_teams[t] for t in sorted(spec_teams)]
    names = result.names or [b.name for b in result.seats]
    if not quiet:
        print_score_table(console, result.game, entries_from_dicts(result.entries),
                          title=f"{result.game}, seed {result.seed}", wide=wide)
    console.print(f"Result: {describe_outcome(result.outcome, teams, names)}")
    if (line := match_fault_line(result)) is not None:
        console.print(line, markup=False)
    if result.fault is not None and result.fault.stderr_tail and not quiet:
        console.print(f"Last stderr lines of seat {result.fault.seat}:")
        for line in result.fault.stderr_tail[-10:]:
            console.print(f"  | {shown(line)}", markup=False)
    if result.sandbox != "bwrap" and not quiet:
        console.print("Sandbox: off (the bots were not isolated)")
    elif (how := describe_isolation(result.sandbox)) != "bwrap" and not quiet:
        console.print(f"Sandbox: {how}")
    if result.record_path is not None and not quiet:
        console.print(f"Record: {result.record_path}  (view: referee replay {result.record_path})")


def match_fault_line(result: MatchResult) -> str | None:
    """The fault line of a forfeited game (``types.fault_line``), or None."""
    from referee.match.types import fault_line

    f = result.fault
    if f is None:
        return None
    who = (result.names or [b.name for b in result.seats])[f.seat]  # its ready name, as the result line says
    return fault_line(game=result.game, seat=f.seat, who=who, reason=f.reason.value,
                      message=f.message, record=result.record_path, request=f.request, deal=f.deal, turn=f.turn)


def claim_record(path: Path, *, force: bool) -> Path:
    """Create the file the record goes to and return its path: ``path``, or, when a file is
    there already and not ``force``, the first free ``STEM-2.jsonl``, ``STEM-3.jsonl`` ... beside
    it, said in one line on stderr. A record is never overwritten without ``--force``."""
    import sys

    if path.is_dir():
        raise UserError(f"--record {path}: is a directory")
    stem, suffix = (path.name.removesuffix(".jsonl"), ".jsonl") if path.name.endswith(".jsonl") else (
        path.stem, path.suffix)
    candidate, n = path, 1
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            try:
                with open(candidate, "wb" if force else "xb"):  # "xb" claims a free name (O_EXCL): no race
                    break
            except FileExistsError:
                n += 1
                candidate = path.with_name(f"{stem}-{n}{suffix}")
    except OSError as exc:
        raise UserError(f"cannot write record {candidate}: {exc.strerror}") from None
    if candidate != path:
        print(f"referee: {path} exists; recording to {candidate} (--force overwrites)", file=sys.stderr)
    return candidate


def register(app: typer.Typer) -> None:
    @app.command(short_help="Play one game between bots; print the score table and result.")
    def play(
        game: Annotated[str, typer.Argument(metavar="GAME", help="back-alley, schmier or pegs-and-jokers")],
        bot: Annotated[list[str], typer.Option(
            "--bot", "-b", metavar="COMMAND", help="Bot command, once per team (each seat of the team runs its own "
            "process) or once per seat, in seat/team order. Quote commands with arguments.")],
        seed: Annotated[int | None, typer.Option(help="Game seed (default: random, printed).")] = None,
        record: Annotated[Path | None, typer.Option(
            help="Where to write the match record (default records/GAME-seedN.jsonl).")] = None,
        players: Annotated[int | None, typer.Option(help="Pegs and Jokers: 4, 6 or 8 players.")] = None,
        option: Annotated[list[str], typer.Option(
            "--option", "-o", metavar="KEY=VALUE", help="Game option, e.g. max_redeals=5.")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
        name: Annotated[list[str], typer.Option(
            "--name", metavar="NAME", help="Display name per --bot, in order.")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
        decision_ms: Annotated[int, typer.Option(help="Time limit per decision, in ms.")] = 1000,
        handshake_ms: Annotated[int, typer.Option(help="Time limit for a bot's ready, in ms.")] = 10000,
        time_bank_ms: Annotated[int, typer.Option(help="Extra time per bot per game, in ms.")] = 0,
        memory_mb: MemoryOption = _DEFAULTS.memory_mb or 0,
        cpu_s: CpuOption = _DEFAULTS.cpu_s or 0,
        max_processes: ProcessesOption = _DEFAULTS.max_processes or 0,
        max_open_files: OpenFilesOption = _DEFAULTS.max_open_files or 0,
        max_line_bytes: Annotated[int, typer.Option(help="Longest line a bot may write, in bytes.")] = (
            _DEFAULTS.max_line_bytes),
        stderr_keep_bytes: Annotated[int, typer.Option(
            help="Bytes of each bot's stderr kept in its file; the rest is dropped.")] = _DEFAULTS.stderr_keep_bytes,
        stderr_dir: Annotated[Path | None, typer.Option(
            help="Folder for each bot's stderr (default: next to the record).")] = None,
        sandbox: Annotated[SandboxMode, typer.Option(
            help="auto: run each bot in a bubblewrap sandbox when bwrap works, else say so and run "
            "unisolated; required: refuse to run without it; off: no sandbox (docs/security.md).")] = SandboxMode.AUTO,
        force: Annotated[bool, typer.Option(
            "--force", help="Overwrite the record if it exists (default: record to a new name and say so).")] = False,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the result line.")] = False,
        wide: Annotated[bool, typer.Option(
            "--wide", help="The score table whole, however wide, instead of fitted to the screen.")] = False,
    ) -> None:
        """Play one game between bots and print the score table and the result.

        Exit status: 0 the game was played to its end; 3 it ended by a forfeit (a fault
        line names the bot, the request and the command that shows it); 2 bad input;
        74 an output file could not be written; 70 a bug in the referee; 130 interrupted."""
        import trio

        from referee.games import get_game
        from referee.match.runner import run_match
        from referee_cli.common import bot_specs_for_seats, parse_option_pairs, resolve_sandbox

        spec = get_game(game)
        opts = parse_option_pairs(option)
        if players is not None:
            opts["players"] = players
        opts = spec.normalize_options(opts)
        limits = limits_from_flags({
            "--handshake-ms": handshake_ms, "--decision-ms": decision_ms, "--time-bank-ms": time_bank_ms,
            "--memory-mb": memory_mb, "--cpu-s": cpu_s, "--max-processes": max_processes,
            "--max-open-files": max_open_files, "--max-line-bytes": max_line_bytes,
            "--stderr-keep-bytes": stderr_keep_bytes})
        limits = dataclasses.replace(limits, sandbox=sandbox.value)
        if seed is None:
            seed = secrets.randbelow(2**31)
        bots = bot_specs_for_seats(spec, opts, bot, name, seed=seed)
        resolve_sandbox(sandbox.value)
        record_path = claim_record(record or Path("records") / f"{spec.name}-seed{seed}.jsonl", force=force)
        err_dir = stderr_dir or record_path.with_name(record_path.name.removesuffix(".jsonl") + ".stderr")
        try:
            err_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create stderr folder {err_dir}: {exc.strerror}") from None
        result = trio.run(lambda: run_match(spec.name, opts, bots, seed=seed, record_path=record_path,
                                            limits=limits, stderr_dir=err_dir))
        print_result(result, quiet, wide)
        if result.forfeit:
            raise typer.Exit(EXIT_FORFEIT)
