"""`referee deals GAME -n N --seed S [-o FILE]`: write a deals file.

A deals file lists deal seeds, one per line (``#`` comments and blank lines
allowed); a tournament with ``deals = "FILE"`` plays deal ``d`` of every
pairing with the file's seed ``d``, so two tournaments given the same file
play the same cards (docs/tournaments.md, "Fixed deal sets").  The seeds are
a function of GAME, S and their position only: the same command writes the
same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee_cli.errors import UserError

MAX_DEALS = 10_000_000


def register(app: typer.Typer) -> None:
    @app.command(short_help="Write a deals file: deal seeds for `deals = \"FILE\"`.")
    def deals(
        game: Annotated[str, typer.Argument(metavar="GAME", help="back-alley, schmier or pegs-and-jokers.")],
        count: Annotated[int, typer.Option("--count", "-n", min=1, max=MAX_DEALS, help="How many deal seeds.")],
        seed: Annotated[int, typer.Option(help="Seed the deal seeds derive from.")] = 0,
        output: Annotated[Path | None, typer.Option(
            "--output", "-o", help="File to write (replaced if it exists); default: standard output.")] = None,
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="With --output: no line saying what was written.")] = False,
    ) -> None:
        """Write a deals file: deal seeds a tournament can play with `deals = "FILE"`."""
        from referee.games import GameError, get_game
        from tournaments.config import format_deals
        from tournaments.durable import write_atomic
        from tournaments.schedule import deal_set


        try:
            spec = get_game(game)
        except GameError as exc:
            raise UserError(str(exc)) from None
        text = format_deals(spec.name, deal_set(spec.name, count, seed),
                            f"referee deals {spec.name} -n {count} --seed {seed}")
        if output is None:
            typer.echo(text, nl=False)
            return
        write_atomic(output, text.encode("ascii"))  # OutputError: one line, exit 74
        if not quiet:
            typer.echo(f"{count} deal seeds written to {output}", err=True)
