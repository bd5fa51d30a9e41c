"""`referee report OUT --html FILE`: one self-contained page for a tournament's output folder.

Reads ``OUT/standings.json`` (written by every run) and ``OUT/results.jsonl``
for the list of games; writes the page (``tournaments.html_report``).  Every
``referee run`` writes ``OUT/report.html`` this way at its end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.cli.errors import UserError
from referee.inputs import open_input, parse_json, read_input


def register(app: typer.Typer) -> None:
    @app.command()
    def report(
        output: Annotated[Path, typer.Argument(help="A tournament's output directory.")],
        html: Annotated[Path, typer.Option("--html", help="Where to write the page (e.g. report.html).")],
    ) -> None:
        """Write a tournament's standings, charts and games as one HTML page."""
        from tournaments.html_report import write_html_report
        from tournaments.output import RESULTS_FILE
        from tournaments.standings_files import standings_paths


        json_path, _ = standings_paths(output)
        if not json_path.exists() and not json_path.is_symlink():
            raise UserError(f"{json_path} not found: is {output} a tournament's output directory?")
        data = parse_json(read_input(json_path, "standings file", UserError), str(json_path), UserError)
        # results.jsonl is read by the page's writer: a regular file within its cap, checked here first
        # (a FIFO would be waited on, /dev/zero read without end).
        results_path = output / RESULTS_FILE
        if results_path.exists() or results_path.is_symlink():
            with open_input(results_path, "results file", UserError):
                pass
        if not isinstance(data, dict) or "entrants" not in data:
            raise UserError(f"{json_path}: not a standings file")
        try:
            path = write_html_report(output, data, html)
        except OSError as exc:
            raise UserError(f"cannot write {html}: {exc.strerror or exc}") from None
        typer.echo(f"report: {path.resolve().as_uri()}")
