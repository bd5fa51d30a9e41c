"""Bounded, typed reading of every input file: the one place the referee reads a file it did not just write.

Every reader of a file a user (or someone handing the user a file) controls goes
through ``read_input``: a record, a tournament file, a ``secret_file``, a deals
file, and every file read back from a tournament's output folder
(``results.jsonl``, ``standings.json``, ``tournament.json``, the secret).  It
refuses, in one line naming the file, what is not a regular file (a FIFO is
opened without blocking and refused, never waited on; ``/dev/zero`` and
``/dev/urandom`` are devices) and a file over the cap of its kind (``CAPS``),
reading at most one byte past the cap.  ``parse_json`` and ``parse_toml`` put a
cap on nesting (``MAX_DEPTH``) and turn the parsers' own failures (a number
with thousands of digits, recursion) into the same one-line errors.

The error class is the caller's (``RecordError``, ``ConfigError``, ...): every
one is a ``UserFault``, so the CLI prints ``referee: error: ...`` and exits 2.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.errors import UserFault

KIB = 1 << 10
MIB = 1 << 20

#: The largest file of each kind that is read (bytes).  Generous for any real file, finite for a hostile one.
CAPS: dict[str, int] = {
    "record": 512 * MIB,  # a long Pegs and Jokers game is a few MB
    "tournament file": 1 * MIB,
    "secret file": 4 * KIB,  # 64 hex digits and a newline
    "deals file": 64 * MIB,  # a million seeds of 19 digits
    "results file": 4096 * MIB,  # results.jsonl: about 1 KB a game
    "standings file": 256 * MIB,
    "tournament record": 64 * MIB,  # tournament.json: the resolved config and its history
}

#: Deepest nesting of arrays and objects (tables) accepted in a JSON or TOML input.
MAX_DEPTH = 64

_CHUNK = 1 * MIB


def _kind_of_file(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def size_text(n: int) -> str:
    return f"{n // MIB} MB" if n >= MIB else f"{n // KIB} KB" if n >= KIB else f"{n} bytes"


def _too_big(label: str, kind: str) -> str:
    return f"{label}: larger than {size_text(CAPS[kind])}, the most a {kind} may hold"


@contextlib.contextmanager
def open_input(path: Path | str, kind: str, error: type[UserFault], label: str | None = None) -> Iterator[io.FileIO]:
    """``path`` opened for reading if it is a regular file no larger than ``CAPS[kind]``, else ``error``
    in one line.  A FIFO is refused without waiting for a writer.  ``label`` names the file (default:
    its path).  ``FileNotFoundError`` is the one error raised as is, for callers that expect absence."""
    label = label or str(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once (and is refused below).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise error(f"{label}: is a directory, not a {kind}") from None
    except OSError as exc:
        raise error(f"{label}: cannot read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"{label}: is a directory, not a {kind}")
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{label}: is {_kind_of_file(st.st_mode)}, not a {kind} (a regular file)")
        if st.st_size > CAPS[kind]:
            raise error(_too_big(label, kind))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    with io.FileIO(fd, "rb", closefd=True) as f:
        yield f


def read_input(path: Path | str, kind: str, error: type[UserFault], label: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``CAPS[kind]`` of them, or ``error`` in one line
    (``open_input``; a missing file too: ``{label}: no such file``)."""
    cap = CAPS[kind]
    label = label or str(path)
    try:
        with open_input(path, kind, error, label) as f:
            chunks: list[bytes] = []
            size = 0
            while size <= cap:  # the file may grow after the size check: read at most one byte past the cap
                chunk = f.read(min(_CHUNK, cap + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except FileNotFoundError:
        raise error(f"{label}: no such file") from None
    except OSError as exc:
        raise error(f"{label}: cannot read ({exc.strerror or exc})") from None
    if size > cap:
        raise error(_too_big(label, kind))
    return b"".join(chunks)


def depth(value: Any) -> int:
    """How deep arrays and objects nest in ``value`` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level) for child in children)
    return deepest


def _too_deep(label: str) -> str:
    return f"{label}: nested more than {MAX_DEPTH} levels deep"


def parse_json(data: bytes | str, label: str, error: type[UserFault]) -> Any:
    """JSON from an input, nested at most ``MAX_DEPTH`` deep; ``error`` in one line if it is not."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise error(_too_deep(label)) from None
    except ValueError as exc:  # JSONDecodeError, a number past the digit limit, bad UTF-8
        raise error(f"{label}: not valid JSON: {exc}") from None
    if depth(value) > MAX_DEPTH:
        raise error(_too_deep(label))
    return value


def parse_toml(data: bytes, label: str, error: type[UserFault]) -> dict[str, Any]:
    """TOML from an input, nested at most ``MAX_DEPTH`` deep; ``error`` in one line if it is not."""
    import tomllib

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # TOML is UTF-8 text
        raise error(f"{label}: not valid TOML: not UTF-8 text (byte {exc.start + 1} "
                    f"is {exc.object[exc.start:exc.start + 1]!r})") from None
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise error(_too_deep(label)) from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{label}: not valid TOML: {exc}") from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise error(f"{label}: not valid TOML: {str(exc).split(';')[0]}") from None
    if depth(value) > MAX_DEPTH:
        raise error(_too_deep(label))
    return value


__all__ = ["CAPS", "MAX_DEPTH", "depth", "open_input", "parse_json", "parse_toml", "read_input", "size_text"]
