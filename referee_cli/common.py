"""Helpers shared by the CLI commands: bot commands, tables, option parsing."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.games import GAMES, GameSpec
from referee.match import bubblewrap, cgroups
from referee.match.commands import CommandError, check_command, fill_placeholders
from referee.match.types import BotSpec
from referee_cli.errors import UserError

if TYPE_CHECKING:  # rich, the record's models and the renderers are imported where they are used:
    # `referee play` reaches its first request without them
    from rich.console import Console

    from referee.match.record import Entry
    from referee.tables import Grid


def parse_option_pairs(pairs: list[str]) -> dict[str, Any]:
    """``--option key=value`` pairs; values are JSON when they parse, else strings."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def check_bot_command(text: str, cwd: str | None = None, *, placeholders: bool = False) -> tuple[str, ...]:
    """Split a bot command and check that it can be started; raise UserError if not.
    With ``placeholders`` an argument holding ``{seed}`` etc. is filled in later and not checked."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise UserError(f"bot command {text!r}: {exc}") from None
    if not argv:
        raise UserError("empty bot command")
    try:
        check_command(argv, Path(cwd) if cwd else Path.cwd(), placeholders=placeholders)
    except CommandError as exc:
        raise UserError(f"bot command {text!r}: {exc}") from None
    return argv


def bot_specs_for_seats(spec: GameSpec, options: dict[str, Any], commands: list[str],
                        names: list[str] | None = None, *, seed: int | None = None) -> list[BotSpec]:
    """One command per team (each seat of the team runs its own process) or one per seat.

    With the game's ``seed``, the placeholders of a command are filled in for each seat as a
    tournament does: ``{seed}`` a seed for the bot's own randomness (from the game seed and the
    seat, ``tournaments.schedule.bot_seed``), ``{seat}`` the seat, ``{game}`` 0 (the one game)."""
    seats = spec.num_seats(options)
    teams = spec.num_teams(options)
    if len(commands) not in (teams, seats):
        raise UserError(
            f"{spec.name} with these options has {teams} teams and {seats} seats: give --bot "
            f"{teams} times (one per team) or {seats} times (one per seat), not {len(commands)}"
        )
    names = names or []
    argvs = [check_bot_command(c, placeholders=seed is not None) for c in commands]
    out: list[BotSpec] = []
    for seat in range(seats):
        i = spec.team_of(seat, options) if len(commands) == teams else seat
        base = BotSpec(name=names[i] if i < len(names) else "", command=argvs[i])
        name = base.name or BotSpec.from_command_line(commands[i]).name
        argv = argvs[i]
        if seed is not None:
            from tournaments.schedule import bot_seed

            argv = fill_placeholders(argv, {"seed": bot_seed(seed, seat, ""), "seat": seat, "game": 0})
        out.append(BotSpec(name=name, command=argv, cwd=None, named=bool(base.name)))
    return out


def score_grid(game: str, entries: Sequence[Entry], title: str | None = None) -> Grid | None:
    """The game's score table (its renderer's), ready to fit a width; None if it has no rows."""
    from referee.replay import RENDERERS
    from referee.tables import Grid

    renderer = RENDERERS.get(game)
    if renderer is None:
        return None
    header, rows = renderer.score_table(entries)
    if not rows:
        return None
    return Grid(title, renderer.score_columns(header), [[str(c) for c in row] for row in rows],
                caption=renderer.score_legend)


def print_score_table(console: Console, game: str, entries: Sequence[Entry], title: str | None = None, *,
                      wide: bool = False) -> None:
    """The score table within the console's width (``wide``: whole, as wide as it needs):
    a table too wide is split into parts that each keep the deal (or player) column, and
    a line says so."""
    from referee.tables import fit_width, print_tables

    grid = score_grid(game, entries, title)
    if grid is None:
        return
    width = None if wide else fit_width(console)
    tables = grid.fit(width)
    legend = grid.caption
    if len(tables) > 1 and legend:  # the legend's columns may be in any part: one line under them all
        grid.caption = None
        tables = grid.fit(width)
    print_tables(console, tables)
    if len(tables) > 1:
        if legend:
            console.print(legend, markup=False, soft_wrap=False)  # wrapped between words
        console.print(f"(score table split to fit {width} columns: --wide shows it whole)", markup=False,
                      soft_wrap=False)


def make_console() -> Console:
    from rich.console import Console

    # markup=False: text a bot or a record controls (a name such as "[bold red]x") is printed
    # as written, never read as rich markup, in lines and in table cells alike.
    console = Console(highlight=False, soft_wrap=True, markup=False)
    if not console.is_terminal:  # a pipe or file: do not squeeze tables to 80 columns
        console = Console(highlight=False, soft_wrap=True, markup=False, width=max(console.width, 200))
    return console


def known_games() -> str:
    return ", ".join(sorted(GAMES))


def describe_isolation(effective: str) -> str:
    """How bots run here, for the plan line and ``play``'s output: ``bwrap``, or
    ``bwrap, no cgroup caps (why)`` where the kernel cannot cap a sandbox's memory
    and tasks (docs/security.md), or ``off``."""
    if effective != "bwrap":
        return effective
    why = cgroups.available()
    return "bwrap" if why is None else f"bwrap, no cgroup caps: {why}"


def resolve_sandbox(mode: str) -> str:
    """What ``--sandbox MODE`` means on this machine: ``"bwrap"`` or ``"off"``.

    ``required`` without a working bubblewrap is the user's problem (exit 2);
    ``auto`` without one says so in one line on stderr and runs unisolated."""
    try:
        effective = bubblewrap.effective_mode(mode)  # SandboxUnavailable is a UserFault: exit 2
    except ValueError:
        raise UserError(f"--sandbox {mode!r}: expected auto, required or off") from None
    if effective == "off" and mode == "auto":
        warning = bubblewrap.unisolated_warning()
        if warning:
            print(f"referee: {warning}", file=sys.stderr)
    return effective
