"""`referee report OUT --html FILE`: one self-contained page for a tournament's output folder.

Publishes only authenticated results (``tournaments.audit``): with the folder's
``secret`` every line of ``OUT/results.jsonl`` is checked (its MAC, and the lines'
sequence for deleted ones), the standings are recomputed from the lines that pass
(``OUT/standings.json`` is a cache, compared with them), and the page lists what was
rejected; without the secret the page says nothing could be checked.  One line on
stderr says the same.  Every ``referee run`` writes ``OUT/report.html`` this way at its end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee_cli.errors import UserError


def register(app: typer.Typer) -> None:
    @app.command(short_help="Write a tournament's standings, charts and games as one page.")
    def report(
        output: Annotated[Path, typer.Argument(metavar="OUTPUT", help="A tournament's output directory.")],
        html: Annotated[Path, typer.Option("--html", help="Where to write the page (e.g. report.html).")],
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No line saying where the page is.")] = False,
    ) -> None:
        """Write a tournament's standings, charts and games as one HTML page (authenticated results only)."""
        from referee.text import shown
        from tournaments.audit import audit_output
        from tournaments.html_report import write_html_report

        audit = audit_output(output)
        try:
            path = write_html_report(output, html, audit=audit, replays=True)  # every game's replay page, once
        except OSError as exc:
            raise UserError(f"cannot write {html}: {exc.strerror or exc}") from None
        if not quiet or "nothing rejected" not in audit.summary():  # -q: only a problem is said
            typer.echo(f"referee: {shown(audit.summary())}", err=True)  # a rejected line's text is anyone's
        if not quiet:
            typer.echo(f"report: {path.resolve().as_uri()}")
