"""`referee run [TOURNAMENT.toml] [flags]`: a round-robin tournament.

Settings come from the tournament file, and flags override them (or replace
the file entirely): ``--entrant NAME=COMMAND`` adds an entrant whose command
runs in the current directory; ``--output`` is relative to the current
directory, while paths inside the file are relative to the file's folder.
``--secret HEX`` gives the tournament secret (instead of the file's
``secret_file``, or a new one for a new output directory).

``--sprt elo0=0,elo1=5[,alpha=0.05,beta=0.05]`` (or an ``[sprt]`` table in
the file, with ``max_games`` and, for Schmier, ``reference``) turns the run
into a sequential test between the two entrants (``tournaments.sprt``): it
schedules deals up to ``--max-games`` and stops once the test decides.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from referee.match.bubblewrap import SandboxMode
from referee.match.types import MAX_TIME_S
from referee.text import shown
from referee_cli.errors import UserError

if TYPE_CHECKING:  # the rest is imported where it is used: `referee --help` needs none of it
    from tournaments.config import Tournament
    from tournaments.results import GameResult
    from tournaments.sprt import SprtRun, SprtSpec

_MAX_MS = int(MAX_TIME_S * 1000)  # the time-limit flags, in ms: the [limits] maximum
#: The standings columns --columns can name (tournaments.report.STANDINGS_COLUMNS, checked
#: equal by a test; here so that `referee run --help` imports no tournaments module).
STANDINGS_COLUMNS = ("score", "elo", "wdl", "win", "los", "rating", "diff", "games", "forfeits")


def build_tournament(file: Path | None, **settings: Any) -> Tournament:
    """The file's settings with the flags applied on top, resolved and checked
    (``settings``: those of ``_build``, the one list of them)."""
    return build_run(file, **settings)[0]


SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "max_games", "reference")


def _sprt_settings(data: dict[str, Any], sprt: str | None, max_games: int | None,
                   reference: str | None) -> tuple[SprtSpec, int | None, str | None] | None:
    """The SPRT asked for by the file's ``[sprt]`` table and the flags (flags win), if any."""
    from tournaments.sprt import SprtError, SprtSpec

    table = data.pop("sprt", None)
    if table is not None and not isinstance(table, dict):
        raise UserError("sprt: expected a table, e.g. [sprt] elo0 = 0, elo1 = 5")
    table = dict(table or {})
    if unknown := sorted(set(table) - set(SPRT_KEYS)):
        raise UserError(f"sprt: unknown setting {unknown[0]!r} (expected {', '.join(SPRT_KEYS)})")
    if sprt is None and not table:
        if max_games is not None or reference is not None:
            raise UserError("--max-games and --sprt-reference need an SPRT (--sprt or [sprt] in the file)")
        return None
    try:
        if sprt is not None:
            spec = SprtSpec.parse(sprt)
        elif "elo0" in table and "elo1" in table:
            spec = SprtSpec(**{k: table[k] for k in ("elo0", "elo1", "alpha", "beta") if k in table})
        else:
            raise UserError("sprt: both elo0 and elo1 are needed")
    except SprtError as exc:
        raise UserError(str(exc)) from None
    cap = max_games if max_games is not None else table.get("max_games")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise UserError(f"sprt: max_games must be a whole number of games, at least 1, got {cap!r}")
    ref = reference if reference is not None else table.get("reference")
    if ref is not None and not isinstance(ref, str):
        raise UserError(f"sprt: reference must be an entrant's name, got {ref!r}")
    return spec, cap, ref


def build_run(
    file: Path | None,
    *,
    sprt: str | None = None,
    max_games: int | None = None,
    sprt_reference: str | None = None,
    **settings: Any,
) -> tuple[Tournament, SprtRun | None]:
    """``build_tournament``'s tournament, and the SPRT to run on it, if one is asked for."""
    from tournaments.config import load_file
    from tournaments.sprt import SprtError, SprtRun

    data: dict[str, Any] = load_file(file) if file is not None else {}
    wanted = _sprt_settings(data, sprt, max_games, sprt_reference)
    if wanted is None:
        return _build(file, data, **settings), None
    if settings.get("games_per_pairing") is not None or "games_per_pairing" in data:
        raise UserError("an SPRT plays deals until it decides: give --max-games (or sprt.max_games), "
                        "not games_per_pairing")
    spec, cap, reference = wanted
    probe = _build(file, dict(data), **settings)  # the entrants and the game, checked
    try:
        run = SprtRun.for_entrants(spec, probe.names, probe.num_teams, reference=reference, max_games=cap)
    except SprtError as exc:
        raise UserError(str(exc)) from None
    data["games_per_pairing"] = run.units_cap
    return _build(file, data, **settings), run


def _build(
    file: Path | None,
    data: dict[str, Any],
    *,
    game: str | None = None,
    players: int | None = None,
    options: Sequence[str] = (),
    entrants: Sequence[str] = (),
    seed: int | None = None,
    games_per_pairing: int | None = None,
    jobs: int | None = None,
    pin_cores: bool | None = None,
    output: Path | None = None,
    decision_ms: int | None = None,
    handshake_ms: int | None = None,
    time_bank_ms: int | None = None,
    sandbox: str | None = None,
    secret: str | None = None,
    dask: str | None = None,
    batch: int | None = None,
    audit: float | None = None,
    shared_output: bool | None = None,
    gauntlet: Sequence[str] = (),
    cwd: Path | None = None,
) -> Tournament:
    from referee_cli.common import parse_option_pairs
    from tournaments.config import parse, parse_secret, resolve

    cwd = cwd or Path.cwd()
    flags = {"game": game, "players": players, "seed": seed, "games_per_pairing": games_per_pairing,
             "jobs": jobs, "pin_cores": pin_cores, "sandbox": sandbox, "dask": dask,
             "batch": batch, "audit": audit, "shared_output": shared_output}
    data.update({k: v for k, v in flags.items() if v is not None})
    if output is not None:
        data["output"] = str(cwd / output)
    if secret is not None:
        data.pop("secret_file", None)  # the flag replaces the file's setting
    if options:
        data["options"] = {**data.get("options", {}), **parse_option_pairs(list(options))}
    limits = {"decision_s": decision_ms, "handshake_s": handshake_ms, "time_bank_s": time_bank_ms}
    if any(v is not None for v in limits.values()):
        data["limits"] = {**data.get("limits", {}),
                          **{k: v / 1000 for k, v in limits.items() if v is not None}}
    if gauntlet:  # the flag's challengers replace the file's
        data.update(format="gauntlet", challengers=list(gauntlet))
    if entrants:
        data["entrants"] = [*data.get("entrants", []), *(_entrant_flag(e, cwd) for e in entrants)]
    if "game" not in data:
        raise UserError("no game: give a tournament file or --game (back-alley, schmier, pegs-and-jokers)")
    if not data.get("entrants"):
        raise UserError("no entrants: list [[entrants]] in the tournament file or give --entrant NAME=COMMAND")
    config = parse(data, str(file) if file is not None else "settings")
    t = resolve(config, file.parent if file is not None else cwd)
    if secret is not None:
        t = t.with_secret(parse_secret(secret, "--secret"))
    return dataclasses.replace(t, source=file.resolve()) if file is not None else t


def _entrant_flag(text: str, cwd: Path) -> dict[str, Any]:
    name, sep, command = text.partition("=")
    if not sep or not name.strip() or not command.strip():
        raise UserError(f"--entrant {text!r}: expected NAME=COMMAND, e.g. rnd='python3 sample_bots/random_bot.py'")
    return {"name": name.strip(), "command": command.strip(), "cwd": str(cwd)}


def describe_sprt(run: SprtRun) -> str:
    s = run.spec
    versus = f"{run.a} vs {run.b}" + (f" (reference {run.reference} in the third team)" if run.reference else "")
    return (f"SPRT {versus}: H0 elo {s.elo0:g}, H1 elo {s.elo1:g} (normalised), alpha {s.alpha:g}, "
            f"beta {s.beta:g}; LLR bounds [{s.lower:.2f}, {s.upper:.2f}]; at most {run.max_games} games")


def describe_plan(t: Tournament, done: int, isolation: str | None = None) -> str:
    """The plan: what will be played (one line), then one line per entrant with limits of its own."""
    from math import factorial

    from tournaments.config import describe_overrides

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    shape = t.shapes()[-1]
    kind = f" gauntlet of {', '.join(t.challengers)}" if t.challengers else ""
    deals = n(t.deals_per_pairing, "deal")
    if t.rounds != 1:
        deals += f" ({t.rounds} rounds x {t.games_per_pairing})"
    grown = f" ({n(len(t.shapes()) - 1, 'growth')} since the first run)" if len(t.shapes()) > 1 else ""
    resumed = f"; resuming, {done} already played" if done else ""
    source = f"; deals from {t.deals_path}" if t.deals_path is not None else ""
    lines = [f"{t.game}{kind}: {n(len(t.entrants), 'entrant')}, "
             f"{n(len(shape.pairings(t.num_teams)), 'pairing')} x {deals} x "
             f"{n(factorial(t.num_teams), 'seating')} = {n(t.total_games(), 'game')}{grown}{source}; "
             f"{_where(t)}; sandbox {t.limits.sandbox}{f' ({isolation})' if isolation else ''}; "
             f"output {t.output}{resumed}"]
    lines.extend(f"  own limits: {line}" for line in describe_overrides(t.overrides))
    return "\n".join(lines)


def _where(t: Tournament) -> str:
    if t.dask is None:
        return f"jobs {t.jobs}"
    # --jobs plays no part on Dask: chunks of whole duplicate deals, two per worker thread in flight.
    if t.batch:
        from math import factorial

        from tournaments.chunks import units_for_batch

        unit = factorial(t.num_teams)  # the seatings of one deal
        games = units_for_batch(t.batch, unit) * unit
        size = f"chunks of {games} games" + (f" ({t.batch} rounded up to whole deals)" if games != t.batch else "")
    else:
        size = "chunks sized from the game time"
    where = f"dask {t.dask}, {size}"
    if t.audit:
        where += f", audit {t.audit:g} of chunks"
    if t.shared_output:
        where += ", shared output folder"
    return where


def register(app: typer.Typer) -> None:
    @app.command(short_help="Run a tournament: round robin or gauntlet, duplicate deals.")
    def run(
        tournament: Annotated[Path | None, typer.Argument(
            metavar="TOURNAMENT",
            help="Tournament file (TOML). Optional when --game and --entrant give the settings.")] = None,
        jobs: Annotated[int | None, typer.Option(
            "--jobs", "-j", min=1,
            help="Games played at once (default: the file's, else the number of cores).")] = None,
        pin_cores: Annotated[bool | None, typer.Option(
            "--pin-cores/--no-pin-cores",
            help="Run each game's referee worker and bots on one core (default: the file's, else on). "
                 "Turn off for bots that use several threads.")] = None,
        output: Annotated[Path | None, typer.Option(
            help="Output directory; an existing one is resumed.")] = None,
        seed: Annotated[int | None, typer.Option(help="Tournament seed (all deal seeds derive from it).")] = None,
        game: Annotated[str | None, typer.Option(help="back-alley, schmier or pegs-and-jokers.")] = None,
        players: Annotated[int | None, typer.Option(help="Pegs and Jokers: 4, 6 or 8 players.")] = None,
        option: Annotated[list[str], typer.Option(
            "--option", "-o", metavar="KEY=VALUE", help="Game option (repeatable).")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
        entrant: Annotated[list[str], typer.Option(
            "--entrant", "-e", metavar="NAME=COMMAND",
            help="Add an entrant, run in the current directory (repeatable).")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
        games_per_pairing: Annotated[int | None, typer.Option(
            "--games-per-pairing", "-n", min=1,
            help="Deal seeds per pairing; each is played in every seating of the pairing.")] = None,
        decision_ms: Annotated[int | None, typer.Option(
            min=1, max=_MAX_MS, help="Time limit per decision, in ms.")] = None,
        handshake_ms: Annotated[int | None, typer.Option(
            min=1, max=_MAX_MS, help="Time limit for a bot's ready, in ms.")] = None,
        time_bank_ms: Annotated[int | None, typer.Option(
            min=0, max=_MAX_MS, help="Extra time per bot per game, in ms.")] = None,
        sandbox: Annotated[SandboxMode | None, typer.Option(
            help="auto | required | off: run each bot in a bubblewrap sandbox (default: the file's, else "
                 "auto: bubblewrap when it works, else say so and run unisolated; docs/security.md).")] = None,
        secret: Annotated[str | None, typer.Option(
            metavar="HEX", help="Tournament secret, 64 hex digits (default: the file's secret_file, else the "
                                "output directory's own, made at its first run). Deal seeds derive from it.")] = None,
        dask: Annotated[str | None, typer.Option(
            "--dask", metavar="ADDRESS",
            help="Play on a Dask cluster: its scheduler's address (tcp://HOST:8786, tls://HOST:PORT), or local:N to "
                 "start N single-threaded workers on this machine (the dask extra; docs/distributed.md).")] = None,
        batch: Annotated[int | None, typer.Option(
            "--batch", metavar="K",
            help="Dask only: games per task, rounded up to whole duplicate deals (default: sized from the "
                 "measured game time so a task lasts about 20 s).")] = None,
        audit: Annotated[float | None, typer.Option(
            "--audit", metavar="SHARE",
            help="Dask only: share of tasks (0 to 1, e.g. 0.02) replayed on another worker and compared.")] = None,
        shared_output: Annotated[bool | None, typer.Option(
            "--shared-output/--no-shared-output",
            help="Dask only: the workers see the output folder at the same path and write records there "
                 "(checked).")] = None,
        gauntlet: Annotated[list[str], typer.Option(
            "--gauntlet", metavar="NAME",
            help="Play a gauntlet: NAME plays every other entrant, the others never meet "
                 "(repeatable; replaces the file's challengers).")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
        sprt: Annotated[str | None, typer.Option(
            metavar="elo0=X,elo1=Y[,alpha=A,beta=B]",
            help="Sequential test between the two entrants (normalised Elo, as fishtest and fastchess): "
                 "play duplicate deals until H0 or H1 is accepted, or the game cap.")] = None,
        max_games: Annotated[int | None, typer.Option(
            "--max-games", min=1, help="SPRT: stop after this many games, decided or not (default 20000).")] = None,
        sprt_reference: Annotated[str | None, typer.Option(
            "--sprt-reference", metavar="NAME",
            help="SPRT in Schmier: the entrant that fills the third team.")] = None,
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="No progress and no tables: one summary line (faults and errors still "
            "on stderr).")] = False,
        wide: Annotated[bool, typer.Option(
            "--wide", help="Every column of the standings, in tables as wide as they need.")] = False,
        columns: Annotated[str | None, typer.Option(
            "--columns", metavar="NAMES", help="The standings' columns after # and entrant, e.g. elo,wdl,win: "
            f"any of {','.join(STANDINGS_COLUMNS)}.")] = None,
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Check the settings, print the plan and stop.")] = False,
    ) -> None:
        """Run a tournament (round robin or gauntlet) with duplicate deals, in parallel, resumable, growable."""
        picked = parse_columns(columns)
        import trio
        from rich.console import Console

        from referee_cli.common import describe_isolation, make_console, resolve_sandbox
        from tournaments.html_report import write_html_report
        from tournaments.output import open_output
        from tournaments.report import (
            LiveSummary,
            PlainProgress,
            QuietProgress,
            RichProgress,
            print_decision_times,
            print_standings,
            summary_line,
        )
        from tournaments.runner import run_tournament
        from tournaments.standings import decision_times
        from tournaments.standings_files import standings_paths

        t, sprt_run = build_run(
            tournament, game=game, players=players, options=option, entrants=entrant, seed=seed,
            games_per_pairing=games_per_pairing, jobs=jobs, pin_cores=pin_cores, output=output, decision_ms=decision_ms,
            handshake_ms=handshake_ms, time_bank_ms=time_bank_ms, secret=secret, dask=dask, gauntlet=gauntlet,
            batch=batch, audit=audit, shared_output=shared_output,
            sandbox=sandbox.value if sandbox is not None else None,
            sprt=sprt, max_games=max_games, sprt_reference=sprt_reference,
        )
        # On a terminal, long lines wrap between words; piped, a line stays one line.
        err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)
        unwrapped = not err.is_terminal
        isolation = describe_isolation(resolve_sandbox(t.limits.sandbox))
        if t.network_entrants:
            err.print(f"warning: network allowed for {', '.join(t.network_entrants)} (network = true): "
                      "they can reach other machines and each other", markup=False)
        if dry_run:
            err.print(describe_plan(t, 0, isolation), markup=False, soft_wrap=unwrapped)
            if sprt_run is not None:
                err.print(describe_sprt(sprt_run), markup=False, soft_wrap=unwrapped)
            return
        opened = open_output(t)
        for problem in opened.problems:
            err.print(f"referee: {shown(problem)}", markup=False)
        err.print(describe_plan(opened.tournament, len(opened.done), isolation), markup=False, soft_wrap=unwrapped)
        if sprt_run is not None:
            err.print(describe_sprt(sprt_run), markup=False, soft_wrap=unwrapped)
        live = LiveSummary(opened.tournament, opened.done, sprt_run)
        progress: QuietProgress | PlainProgress | RichProgress
        if quiet:
            progress = QuietProgress(game=t.game, output=t.output)
        elif not err.is_terminal:
            progress = PlainProgress(live=live, game=t.game, output=t.output)
        else:
            progress = RichProgress(err, live=live, game=t.game, output=t.output)
        try:
            outcome = trio.run(_until_interrupted,
                               lambda: run_tournament(t, progress=progress, opened=opened, sprt=sprt_run))
        except Stopped as stop:  # SIGTERM (a service manager, `kill`) or SIGHUP (the terminal closed)
            print(f"referee: stopped by {signal.Signals(stop.signum).name}; finished games are kept in "
                  f"{t.output}; run the same command again to resume", file=sys.stderr)
            raise typer.Exit(code=128 + stop.signum) from None
        except KeyboardInterrupt:
            print(f"referee: interrupted; finished games are kept in {t.output}; "
                  "run the same command again to resume", file=sys.stderr)
            raise typer.Exit(code=130) from None
        json_path, csv_path = standings_paths(t.output)  # written by the run
        data = outcome.standings.to_json()
        if quiet:
            print(summary_line(data, t.game), flush=True)
        else:
            print_standings(data, make_console(), wide=wide, columns=picked)
            # Measurements, not results: on stderr with the other diagnostics, so stdout is the same
            # for the same games (an interrupted and resumed run prints what an uninterrupted one does).
            print_decision_times(decision_times(t.names, outcome.results.values()), data, err, wide=wide)
        for line in fault_summary(outcome.results, t.game, t.output):
            err.print(line, markup=False)
        if outcome.cluster is not None and not quiet:  # a Dask run: per worker, audits (cluster.json)
            from tournaments.cluster_checks import report_lines

            for line in report_lines(outcome.cluster):
                err.print(line, markup=False)
        report = write_html_report(t.output, t.output / "report.html")
        if quiet:
            err.print(f"output: {t.output} ({json_path.name}, {csv_path.name}, results.jsonl, {report.name})",
                      markup=False)
            return
        err.print(f"standings: {json_path} and {csv_path.name}; results: {t.output / 'results.jsonl'}",
                  markup=False)
        err.print(f"report: {report.resolve().as_uri()}", markup=False)


def parse_columns(text: str | None) -> list[str] | None:
    """``--columns elo,wdl,win``: the standings' columns to show, in that order (checked)."""
    if text is None:
        return None
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if not names:
        raise UserError(f"--columns: give column names, any of {', '.join(STANDINGS_COLUMNS)}")
    for n in names:
        if n not in STANDINGS_COLUMNS:
            raise UserError(f"--columns: unknown column {n!r} (expected any of {', '.join(STANDINGS_COLUMNS)})")
    if len(set(names)) != len(names):
        raise UserError(f"--columns {text!r}: a column is named twice")
    return names


def fault_summary(results: dict[int, GameResult], game: str, output: Path) -> list[str]:
    """The end-of-run list of every faulted game (resumed ones too), by game id: one fault line each."""
    from tournaments.results import game_fault_line

    lines = [line for _, r in sorted(results.items()) if (line := game_fault_line(r, game, output)) is not None]
    if not lines:
        return []
    return [f"{len(lines)} game{'s' if len(lines) != 1 else ''} ended by a forfeit:", *(f"  {x}" for x in lines)]


class Stopped(Exception):
    """The run was asked to stop by a signal other than SIGINT (SIGTERM, SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


async def _until_interrupted(start):
    """Run ``start()``; on SIGINT cancel it cleanly and raise KeyboardInterrupt
    afterwards; on SIGTERM or SIGHUP the same, raising ``Stopped``.

    Trio would otherwise inject KeyboardInterrupt at an arbitrary point, which
    can leave a coroutine created but never awaited (a stray warning on exit);
    and SIGTERM's default would end the referee at once, leaving its worker
    processes and their bots to find out alone, and the standings unwritten.
    Cancellation instead reaches every game at a checkpoint, each game's
    shielded teardown stops its bots, and the standings match results.jsonl.
    """
    import trio

    interrupted: int | None = None
    result = None
    error: Exception | None = None
    async with trio.open_nursery() as nursery:
        async def watch() -> None:
            nonlocal interrupted
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
                async for signum in signals:
                    interrupted = signum
                    nursery.cancel_scope.cancel()
                    return

        async def work() -> None:
            nonlocal result, error
            try:
                result = await start()
            except Exception as exc:  # re-raised as itself below, not wrapped in a group
                error = exc
            finally:
                nursery.cancel_scope.cancel()

        nursery.start_soon(watch)
        nursery.start_soon(work)
    if interrupted == signal.SIGINT:
        raise KeyboardInterrupt
    if interrupted is not None:
        raise Stopped(interrupted)
    if error is not None:
        raise error
    return result
