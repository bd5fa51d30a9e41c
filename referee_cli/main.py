"""The `referee` command: play, run, replay, ask, deals, worker.

Errors become exit statuses here and nowhere else (``run``): the commands
raise ``UserFault`` / ``RefereeBug`` (``referee.errors``) and never translate.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

import typer

from referee.errors import EXIT_BUG, describe_bug, save_traceback, user_fault_in

EXIT_INTERRUPTED = 130

#: Each command and the module whose ``register(app)`` adds it, in the order ``--help``
#: lists them.  A module is imported when its command is registered: for a command line
#: that names one command, only that one (``_LazyTyper``), so ``referee replay`` neither
#: imports the other commands' modules nor builds their click commands.
COMMANDS: dict[str, str] = {
    "play": "referee_cli.play", "replay": "referee_cli.replay", "ask": "referee_cli.ask",
    "run": "referee_cli.run", "deals": "referee_cli.deals", "report": "referee_cli.report",
    "worker": "referee_cli.worker",
}
#: The commands that live with the tournaments package (skipped while it is being built).
_TOURNAMENT_COMMANDS = {"run", "deals", "report"}
#: The root options that take a value (``--log-level debug``), to find the command after them.
_ROOT_OPTIONS_WITH_VALUE = {"--log-level"}


def command_named(argv: Sequence[str]) -> str | None:
    """The command a command line names, if it names one of ``COMMANDS`` after root options
    only; None otherwise (no command, ``--help``, an unknown word or option: then every
    command is registered and click answers as it always has)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in _ROOT_OPTIONS_WITH_VALUE:
            i += 2
        elif arg.partition("=")[0] in _ROOT_OPTIONS_WITH_VALUE and "=" in arg:
            i += 1
        else:
            return arg if arg in COMMANDS else None
    return None


class _LazyTyper(typer.Typer):
    """The referee's app: registers the commands a command line needs as it is called."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._commands: dict[str, list[Any]] = {}  # command -> the CommandInfos its module registered

    def register(self, names: Sequence[str]) -> None:
        """Register these commands (once each), keeping ``COMMANDS``' order."""
        for name in names:
            if name in self._commands:
                continue
            before = len(self.registered_commands)
            try:
                module = importlib.import_module(COMMANDS[name])
            except ImportError as exc:  # pragma: no cover  (only while the package is being built)
                if name not in _TOURNAMENT_COMMANDS or getattr(exc, "name", None) not in (
                        COMMANDS[name], "tournaments", "referee_cli"):
                    raise
                self._commands[name] = []
                continue
            module.register(self)
            self._commands[name] = self.registered_commands[before:]
        self.registered_commands = [info for name in COMMANDS for info in self._commands.get(name, [])]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        argv = kwargs.get("args", args[0] if args else None)
        named = command_named(sys.argv[1:] if argv is None else list(argv))
        self.register(list(COMMANDS) if named is None else [named])
        return super().__call__(*args, **kwargs)


app = _LazyTyper(
    name="referee",
    help="Referee for Back Alley, Schmier and Pegs and Jokers bots: play games, run tournaments, replay records.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
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


def _say(text: str) -> None:
    from referee.text import shown  # an error can quote a record, a file name, a bot's words

    print(f"referee: {shown(text)}", file=sys.stderr)


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
