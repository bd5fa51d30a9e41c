"""Errors named for whose fault they are, one base per side (as python-chess keeps).

* ``UserFault``: not the referee's bug.  Bad input (a command-line value, a
  tournament file, a record) or an environment that refuses (a full disk).
  The CLI prints its message as one line, ``referee: error: ...``, and exits
  with its ``exit_code``: 2, or 74 for ``OutputError``.
* ``RefereeBug``: our own bug.  The CLI prints a short message and the path
  of a file holding the traceback, and exits 70.  Any exception that is not a
  ``UserFault`` is treated the same way.

The CLI maps both in one place (``referee_cli.main.run``); commands raise and
never translate.  Exit statuses are listed in README.md ("Exit status").
"""

from __future__ import annotations

import datetime as _dt
import errno
import os
import tempfile
import traceback
from pathlib import Path

EXIT_USER = 2  # bad input
EXIT_BUG = 70  # sysexits EX_SOFTWARE: the referee's own bug
EXIT_OUTPUT = 74  # sysexits EX_IOERR: an output file could not be written (a full disk)


class UserFault(Exception):
    """The user's to fix: bad input or a refusing environment.  One line, no traceback."""

    exit_code = EXIT_USER

    def __str__(self) -> str:  # one line, whatever was put in
        return " ".join(super().__str__().split())


class OutputError(UserFault):
    """Writing an output file failed while playing (typically a full disk).

    Raised with the path and the cause; what had finished stays on disk."""

    exit_code = EXIT_OUTPUT

    @classmethod
    def of(cls, path: os.PathLike | str, exc: OSError, what: str = "") -> OutputError:
        """``cannot write record /x/r.jsonl: No space left on device``."""
        return cls(f"cannot write {what + ' ' if what else ''}{path}: {exc.strerror or exc}")


class RefereeBug(Exception):
    """The referee's own bug: never the user's or a bot's fault."""

    exit_code = EXIT_BUG


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, in order; ``[exc]`` for a plain one."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaves(sub)]
    return [exc]


#: A write refused for want of room is never the referee's bug, wherever it is raised.
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def _as_fault(exc: BaseException) -> UserFault | None:
    if isinstance(exc, UserFault):
        return exc
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        return OutputError.of(exc.filename or "an output file", exc)
    return None


def user_fault_in(exc: BaseException) -> UserFault | None:
    """The user fault ``exc`` stands for: itself (a full disk's ``OSError`` counts as an
    ``OutputError``), or the first of a group made only of such."""
    found = [_as_fault(e) for e in leaves(exc)]
    if all(f is not None for f in found):
        return found[0]
    return None


def output_error_in(exc: BaseException) -> OutputError | None:
    """Like ``user_fault_in``, for an ``OutputError`` only."""
    fault = user_fault_in(exc)
    return fault if isinstance(fault, OutputError) else None


def save_traceback(exc: BaseException) -> Path | None:
    """Write ``exc``'s traceback to a new file in the system's temp folder; its path,
    or ``None`` when even that cannot be written."""
    text = "".join(traceback.format_exception(exc))
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    try:
        fd, name = tempfile.mkstemp(prefix=f"referee-bug-{stamp}-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        return None
    return Path(name)


def describe_bug(exc: BaseException) -> str:
    """A short one-line account of a bug: the first exception that is not a user fault."""
    first = next((e for e in leaves(exc) if not isinstance(e, UserFault)), exc)
    text = " ".join(str(first).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(first).__name__}: {text}" if text else type(first).__name__
