"""The `referee` command: play, run, replay."""

from __future__ import annotations

import os
import sys

import typer

from referee.cli import play, replay
from referee.cli.errors import UserError
from referee.logging import configure_logging

app = typer.Typer(
    name="referee",
    help="Referee for Back Alley, Schmier and Pegs and Jokers bots: play games, run tournaments, replay records.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root(
    log_level: str = typer.Option("warning", help="Diagnostics on stderr: debug, info, warning, error."),
) -> None:
    configure_logging(log_level)


play.register(app)
replay.register(app)
try:  # the tournament command lives with the tournaments package
    from referee.cli import run as _run
except ImportError as exc:  # pragma: no cover  (only while the package is being built)
    if getattr(exc, "name", None) not in ("referee.cli.run", "tournaments", "referee.cli"):
        raise
else:
    _run.register(app)


def main() -> None:
    try:
        code = app(standalone_mode=False)
    except UserError as exc:
        print(f"referee: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        print("referee: aborted", file=sys.stderr)
        sys.exit(130)
    except KeyboardInterrupt:
        print("referee: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:  # usage errors (click's, vendored by typer) and our own bugs
        format_message = getattr(exc, "format_message", None)
        if callable(format_message) and isinstance(getattr(exc, "exit_code", None), int):
            message = format_message()
            if message:
                print(f"referee: error: {message}", file=sys.stderr)
            sys.exit(exc.exit_code)
        if os.environ.get("REFEREE_DEBUG"):
            raise
        print(f"referee: internal error: {type(exc).__name__}: {exc} (set REFEREE_DEBUG=1 for a traceback)",
              file=sys.stderr)
        sys.exit(70)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
