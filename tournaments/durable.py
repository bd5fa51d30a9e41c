"""Durable file writes: a reader sees the old file or the new one, never half,
and what is written survives a power cut (the file and its directory are
``fsync``'ed).  Synchronous: the runner calls them from a worker thread.

No write follows a symbolic link: the temporary file is created anew
(``O_EXCL``, so a link in its place is never opened) and renamed over the
target, which replaces a link rather than writing through it; ``fsync_file``
opens without following a link or waiting on a FIFO.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from referee.errors import OutputError


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half.

    When the file system refuses (a full disk), the old file stays, the
    temporary one is removed, and ``OutputError`` names ``path`` and the cause."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.unlink(missing_ok=True)  # a leftover, or a link put there: removed, never written through
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OutputError.of(path, exc) from None
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    """``fsync`` the regular file ``path`` (nothing if it is missing; a link or a FIFO is not opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.fsync(fd)
    finally:
        os.close(fd)


def create_private(path: Path, data: bytes) -> None:
    """Write a new file readable by its owner only (mode 0600, whatever the
    umask), atomically and durably."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)
