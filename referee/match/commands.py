"""Checking a bot command before any game starts: one rule for `referee play` and tournaments.

``check_command(argv, cwd)`` refuses a command that cannot possibly run: a
missing working directory, a program that is neither an executable file nor
on ``PATH``, or a script it names that does not exist.  The script is the
first argument that is not an option, when its suffix says it is a script
file (``SCRIPT_SUFFIXES``); after ``-c``, ``-e`` or ``-m`` what follows is
code or a module name, so nothing is checked.  Relative paths are relative to
``cwd``, where the bot will run.  The caller adds who the command belongs to.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Suffixes of the script files an interpreter command names (``python3 bot.py``,
#: ``node bot.mjs``, ``java -jar bot.jar`` ...).
SCRIPT_SUFFIXES = (
    ".py", ".js", ".mjs", ".cjs", ".rb", ".pl", ".sh", ".jar", ".lua", ".php", ".R", ".jl",
)
#: Options after which an interpreter runs code or a module, not a script file.
CODE_OPTIONS = frozenset({"-c", "-e", "-m", "--eval", "-p", "--print"})


class CommandError(ValueError):
    """The command cannot run; the message is one line without the command's owner."""


def script_of(argv: Sequence[str]) -> str | None:
    """The script file ``argv`` runs, if it names one (see the module docstring)."""
    for arg in argv[1:]:
        if arg in CODE_OPTIONS:
            return None
        if not arg.startswith("-"):
            return arg if arg.endswith(SCRIPT_SUFFIXES) else None
    return None


def check_command(argv: Sequence[str], cwd: Path, *, placeholders: bool = False) -> None:
    """Raise ``CommandError`` if ``argv`` run in ``cwd`` cannot possibly start.

    With ``placeholders`` an argument holding ``{`` (``{seed}``, ``{seat}``,
    ``{game}``) is filled in per game and is not checked.
    """
    if not argv or not argv[0]:
        raise CommandError("the command is empty")
    if not cwd.is_dir():
        raise CommandError(f"working directory {cwd} does not exist")
    program = argv[0]
    if not (placeholders and "{" in program):
        if os.sep in program or (os.altsep and os.altsep in program):
            path = cwd / program
            if not path.exists():
                raise CommandError(f"command {program!r} not found (looked in {cwd})")
            if not path.is_file() or not os.access(path, os.X_OK):
                raise CommandError(f"command {program!r} is not an executable file")
        elif shutil.which(program) is None:
            raise CommandError(f"command {program!r} not found on PATH")
    script = script_of(argv)
    if script is not None and not (placeholders and "{" in script):
        path = cwd / script
        if not path.is_file():
            raise CommandError(f"script {script!r} not found ({path} does not exist)")


#: The placeholders a bot command may hold, filled per game by ``fill_placeholders``.
PLACEHOLDERS = ("{seed}", "{seat}", "{game}")


def fill_placeholders(argv: Sequence[str], values: Mapping[str, object]) -> tuple[str, ...]:
    """``argv`` with each placeholder (``{seed}``, ``{seat}``, ``{game}``) replaced by its value in
    ``values`` (keyed ``seed``, ``seat``, ``game``), wherever it occurs in an argument."""
    def fill(arg: str) -> str:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", str(value))
        return arg

    return tuple(fill(a) for a in argv)
