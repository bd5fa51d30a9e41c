"""Helpers shared by the CLI commands: bot commands, tables, option parsing."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from referee.cli.errors import UserError
from referee.games import GAMES, GameSpec
from referee.match.record import Entry
from referee.match.types import BotSpec, _INTERPRETERS
from referee.replay import RENDERERS


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


def check_bot_command(text: str, cwd: str | None = None) -> tuple[str, ...]:
    """Split a bot command and check that it can be started; raise UserError if not."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise UserError(f"bot command {text!r}: {exc}") from None
    if not argv:
        raise UserError("empty bot command")
    base = Path(cwd) if cwd else Path.cwd()
    prog = argv[0]
    if os.sep in prog:
        path = Path(prog) if Path(prog).is_absolute() else base / prog
        if not path.exists():
            raise UserError(f"bot command {text!r}: {prog} does not exist")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise UserError(f"bot command {text!r}: {prog} is not an executable file")
    elif shutil.which(prog) is None:
        raise UserError(f"bot command {text!r}: {prog!r} not found on PATH")
    name = Path(prog).name
    if (name.split(".")[0] in _INTERPRETERS or name.startswith("python")) and len(argv) > 1:
        script = argv[1]
        if not script.startswith("-") and script.endswith((".py", ".js", ".rb", ".pl", ".sh", ".mjs", ".cjs")):
            path = Path(script) if Path(script).is_absolute() else base / script
            if not path.is_file():
                raise UserError(f"bot command {text!r}: script {script} does not exist")
    return argv


def bot_specs_for_seats(spec: GameSpec, options: dict[str, Any], commands: list[str],
                        names: list[str] | None = None) -> list[BotSpec]:
    """One command per team (each seat of the team runs its own process) or one per seat."""
    seats = spec.num_seats(options)
    teams = spec.num_teams(options)
    if len(commands) not in (teams, seats):
        raise UserError(
            f"{spec.name} with these options has {teams} teams and {seats} seats: give --bot "
            f"{teams} times (one per team) or {seats} times (one per seat), not {len(commands)}"
        )
    names = names or []
    argvs = [check_bot_command(c) for c in commands]
    out: list[BotSpec] = []
    for seat in range(seats):
        i = spec.team_of(seat, options) if len(commands) == teams else seat
        base = BotSpec(name=names[i] if i < len(names) else "", command=argvs[i])
        name = base.name or BotSpec.from_command_line(commands[i]).name
        out.append(BotSpec(name=name, command=argvs[i], cwd=None))
    return out


def score_table(game: str, entries: Sequence[Entry], title: str | None = None) -> Table | None:
    renderer = RENDERERS.get(game)
    if renderer is None:
        return None
    header, rows = renderer.score_table(entries)
    if not rows:
        return None
    table = Table(title=title, show_lines=False, header_style="bold")
    for col in header:
        table.add_column(col, no_wrap=True,
                         justify="right" if col.lower() not in ("trump", "dealer", "contracts") else "left")
    for row in rows:
        table.add_row(*[str(c) for c in row])
    return table


def make_console() -> Console:
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:  # a pipe or file: do not squeeze tables to 80 columns
        console = Console(highlight=False, soft_wrap=True, width=max(console.width, 200))
    return console


def known_games() -> str:
    return ", ".join(sorted(GAMES))
