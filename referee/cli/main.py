"""The `referee` command: play, run, replay, ask, deals, worker.

Errors become exit statuses here and nowhere else (``run``): the commands
raise ``UserFault`` / ``RefereeBug`` (``referee.errors``) and never translate.
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from referee.cli import ask, play, replay, worker
from referee.errors import EXIT_BUG, describe_bug, save_traceback, user_fault_in

EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="referee",
    help="Referee for Back Alley, Schmier and Pegs and Jokers bots: play games, run tournaments, replay records.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


# Commands that log nothing (they read files and print): they skip structlog's import,
# a large share of `replay --verify`'s start-up.
_SILENT_COMMANDS = {"replay"}


@app.callback()
def _root(
    ctx: typer.Context,
    log_level: str = typer.Option("warning", help="Diagnostics on stderr: debug, info, warning, error."),
) -> None:
    if ctx.invoked_subcommand in _SILENT_COMMANDS:
        return
    from referee.logging import configure_logging  # here: `referee --help` never gets this far

    configure_logging(log_level)


play.register(app)
replay.register(app)
ask.register(app)
try:  # the tournament command lives with the tournaments package
    from referee.cli import deals as _deals
    from referee.cli import run as _run
except ImportError as exc:  # pragma: no cover  (only while the package is being built)
    if getattr(exc, "name", None) not in ("referee.cli.run", "referee.cli.deals", "tournaments", "referee.cli"):
        raise
else:
    _run.register(app)
    _deals.register(app)
    from referee.cli import report as _report  # the tournament page, with the tournament command

    _report.register(app)
worker.register(app)


def _say(text: str) -> None:
    print(f"referee: {text}", file=sys.stderr)


def run(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); its exit status.

    0 done; 1 ``replay --verify`` found a divergence; 2 bad input (one line);
    74 an output file could not be written (a full disk; one line); 70 the
    referee's own bug (one line and the path of a saved traceback); 130
    interrupted.  README.md ("Exit status") says the same to users."""
    try:
        code = app(args=argv, standalone_mode=False)
    except typer.Exit as exc:  # typer turns a plain Ctrl-C into a quiet Exit(130) itself
        return exc.exit_code
    except typer.Abort:
        _say("aborted")
        return EXIT_INTERRUPTED
    except BaseException as exc:  # noqa: BLE001 - this is the one place errors are mapped
        return _exit_status(exc)
    return code if isinstance(code, int) else 0


def _exit_status(exc: BaseException) -> int:
    if isinstance(exc, (SystemExit, GeneratorExit)):
        raise exc
    fault = user_fault_in(exc)
    if fault is not None:
        _say(f"error: {fault}")
        return fault.exit_code
    if isinstance(exc, KeyboardInterrupt) or (
        isinstance(exc, BaseExceptionGroup) and exc.subgroup(KeyboardInterrupt) is not None
    ):
        _say("interrupted")
        return EXIT_INTERRUPTED
    # Usage errors from click (vendored by typer): they carry their own message and status.
    format_message = getattr(exc, "format_message", None)
    if callable(format_message) and isinstance(getattr(exc, "exit_code", None), int):
        message = " ".join(str(format_message()).split())
        if message:
            _say(f"error: {message}")
        return exc.exit_code  # type: ignore[attr-defined]
    if os.environ.get("REFEREE_DEBUG"):
        traceback.print_exception(exc)
    saved = save_traceback(exc)
    where = f"traceback saved in {saved}" if saved is not None else "the traceback could not be saved"
    _say(f"internal error (a bug in the referee): {describe_bug(exc)}; {where}; please report it")
    return EXIT_BUG


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
