"""`referee run [TOURNAMENT.toml] [flags]`: a round-robin tournament.

Settings come from the tournament file, and flags override them (or replace
the file entirely): ``--entrant NAME=COMMAND`` adds an entrant whose command
runs in the current directory; ``--output`` is relative to the current
directory, while paths inside the file are relative to the file's folder.
``--secret HEX`` gives the tournament secret (instead of the file's
``secret_file``, or a new one for a new output directory).
"""

from __future__ import annotations

import dataclasses
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from referee.cli.errors import UserError
from referee.match.bubblewrap import SandboxMode
from referee.match.types import MAX_TIME_S

if TYPE_CHECKING:  # the rest is imported where it is used: `referee --help` needs none of it
    from tournaments.config import Tournament

_MAX_MS = int(MAX_TIME_S * 1000)  # the time-limit flags, in ms: the [limits] maximum


def build_tournament(
    file: Path | None,
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
    cwd: Path | None = None,
) -> Tournament:
    """The file's settings with the flags applied on top, resolved and checked."""
    from referee.cli.common import parse_option_pairs
    from tournaments.config import load_file, parse, parse_secret, resolve

    cwd = cwd or Path.cwd()
    data: dict[str, Any] = load_file(file) if file is not None else {}
    flags = {"game": game, "players": players, "seed": seed, "games_per_pairing": games_per_pairing,
             "jobs": jobs, "pin_cores": pin_cores, "sandbox": sandbox}
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


def describe_plan(t: Tournament, done: int, isolation: str | None = None) -> str:
    from math import comb, factorial

    pairings = comb(len(t.entrants), t.num_teams)
    seatings = factorial(t.num_teams)
    resumed = f"; resuming, {done} already played" if done else ""
    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    return (f"{t.game}: {n(len(t.entrants), 'entrant')}, {n(pairings, 'pairing')} x "
            f"{n(t.games_per_pairing, 'deal')} x {n(seatings, 'seating')} = {n(t.total_games(), 'game')}; "
            f"jobs {t.jobs}; sandbox {t.limits.sandbox}{f' ({isolation})' if isolation else ''}; "
            f"output {t.output}{resumed}")


def register(app: typer.Typer) -> None:
    @app.command()
    def run(
        tournament: Annotated[Path | None, typer.Argument(
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
            "--option", "-o", help="Game option KEY=VALUE (repeatable).")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
        entrant: Annotated[list[str], typer.Option(
            "--entrant", "-e",
            help="Add an entrant NAME=COMMAND, run in the current directory (repeatable).")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
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
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="Plain progress lines instead of a live bar.")] = False,
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Check the settings, print the plan and stop.")] = False,
    ) -> None:
        """Run a round-robin tournament with duplicate deals, in parallel, resumable."""
        import trio
        from rich.console import Console

        from referee.cli.common import describe_isolation, make_console, resolve_sandbox
        from tournaments.output import open_output
        from tournaments.report import PlainProgress, RichProgress, print_standings
        from tournaments.runner import run_tournament
        from tournaments.standings_files import standings_paths

        t = build_tournament(
            tournament, game=game, players=players, options=option, entrants=entrant, seed=seed,
            games_per_pairing=games_per_pairing, jobs=jobs, pin_cores=pin_cores, output=output, decision_ms=decision_ms,
            handshake_ms=handshake_ms, time_bank_ms=time_bank_ms, secret=secret,
            sandbox=sandbox.value if sandbox is not None else None,
        )
        err = Console(stderr=True, highlight=False, soft_wrap=True)
        isolation = describe_isolation(resolve_sandbox(t.limits.sandbox))
        if t.network_entrants:
            err.print(f"warning: network allowed for {', '.join(t.network_entrants)} (network = true): "
                      "they can reach other machines and each other", markup=False)
        if dry_run:
            err.print(describe_plan(t, 0, isolation), markup=False)
            return
        opened = open_output(t)
        for problem in opened.problems:
            err.print(f"referee: {problem}", markup=False)
        err.print(describe_plan(t, len(opened.done), isolation), markup=False)
        progress = PlainProgress() if quiet or not err.is_terminal else RichProgress(err)
        try:
            outcome = trio.run(_until_interrupted, lambda: run_tournament(t, progress=progress, opened=opened))
        except KeyboardInterrupt:
            print(f"referee: interrupted; finished games are kept in {t.output}; "
                  "run the same command again to resume", file=sys.stderr)
            raise typer.Exit(code=130) from None
        json_path, csv_path = standings_paths(t.output)  # written by the run
        print_standings(outcome.standings.to_json(), make_console())
        err.print(f"standings: {json_path} and {csv_path.name}; results: {t.output / 'results.jsonl'}",
                  markup=False)


async def _until_interrupted(start):
    """Run ``start()``; on SIGINT cancel it cleanly and raise KeyboardInterrupt afterwards.

    Trio would otherwise inject KeyboardInterrupt at an arbitrary point, which
    can leave a coroutine created but never awaited (a stray warning on exit).
    Cancellation instead reaches every game at a checkpoint, and each game's
    shielded teardown stops its bots.
    """
    import trio

    interrupted = False
    result = None
    error: Exception | None = None
    async with trio.open_nursery() as nursery:
        async def watch() -> None:
            nonlocal interrupted
            with trio.open_signal_receiver(signal.SIGINT) as signals:
                async for _ in signals:
                    interrupted = True
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
    if interrupted:
        raise KeyboardInterrupt
    if error is not None:
        raise error
    return result
