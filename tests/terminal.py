"""A real terminal for tests: run the installed `referee` in a pseudo-terminal of a
given size and read the screen as a person would see it.

The program gets a pty as its stdin, stdout, stderr and controlling terminal (so
`isatty()` is true, rich draws its live displays, and Ctrl-C typed on the terminal
reaches its foreground process group as SIGINT), no `COLUMNS`/`LINES` in its
environment (it must ask the terminal for its size), and `TERM=xterm-256color`.
Everything it writes is fed to a VT100 emulator (pyte), which applies cursor
movements, erasures and rich's redraws: `Terminal.lines()` is the screen plus every
line that scrolled off its top, as a person scrolling back would read them.
`Terminal.raw` keeps the bytes as written, for checks on control sequences.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parents[1]
REFEREE = Path(sys.executable).with_name("referee")  # the console script the venv installed


class TerminalTimeout(AssertionError):
    pass


def _set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _make_controlling_tty() -> None:  # runs in the child, after setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """One program running in a pty of ``cols`` x ``rows``."""

    def __init__(self, argv: Sequence[str | os.PathLike[str]], *, cols: int = 80, rows: int = 40,
                 cwd: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> None:
        self.cols, self.rows = cols, rows
        master, slave = os.openpty()
        _set_size(slave, cols, rows)
        child_env = {k: v for k, v in (env if env is not None else os.environ).items()
                     if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM")}
        child_env["TERM"] = "xterm-256color"
        self.proc = subprocess.Popen(
            [os.fspath(a) for a in argv], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=child_env,
            start_new_session=True, preexec_fn=_make_controlling_tty, close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.raw = bytearray()
        self.screen = pyte.HistoryScreen(cols, rows, history=100_000, ratio=0.5)
        self.stream = pyte.ByteStream(self.screen)
        self._eof = False

    # -- reading -------------------------------------------------------------

    def _pump(self, timeout: float) -> bool:
        """Read what is there (waiting at most ``timeout``); False once the pty is closed."""
        if self._eof:
            return False
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: every process holding the slave has gone
            data = b""
        if not data:
            self._eof = True
            return False
        self.raw += data
        self.stream.feed(data)
        return True

    def wait_for(self, check: str | Callable[[Terminal], bool], timeout: float = 60.0) -> None:
        """Read until ``check`` (a text on the screen, or a predicate) holds."""
        test = (lambda t: check in t.text()) if isinstance(check, str) else check
        deadline = time.monotonic() + timeout
        while not test(self):
            left = deadline - time.monotonic()
            if left <= 0 or not self._pump(min(left, 0.2)) and not test(self):
                raise TerminalTimeout(f"not seen within {timeout} s: {check!r}\n--- screen ---\n{self.text()}")

    def wait(self, timeout: float = 120.0) -> int:
        """Read until the program exits and its output is drained; its exit status
        (128+N for a signal, as a shell shows it)."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None or self._pump(0.05):
            if time.monotonic() > deadline:
                self.kill()
                raise TerminalTimeout(f"still running after {timeout} s\n--- screen ---\n{self.text()}")
            self._pump(0.1)
        rc = self.proc.returncode
        return 128 - rc if rc < 0 else rc

    # -- typing --------------------------------------------------------------

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def interrupt(self) -> None:
        """Ctrl-C, typed on the terminal: the line discipline sends SIGINT to the
        foreground process group."""
        self.type(b"\x03")

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.kill()
        os.close(self.master)

    # -- the screen ----------------------------------------------------------

    def lines(self) -> list[str]:
        """The lines that scrolled off the top, then the screen, without trailing blanks."""
        def text(line: dict) -> str:
            return "".join(line[x].data for x in range(self.cols)).rstrip()

        out = [text(line) for line in self.screen.history.top]
        out += [line.rstrip() for line in self.screen.display]
        while out and not out[-1]:
            out.pop()
        return out

    def text(self) -> str:
        return "\n".join(self.lines())

    def plain(self) -> str:
        """What was written, without control sequences, as logical lines: a line the
        terminal wrapped is whole here (for checking a long path in a line)."""
        text = self.raw.decode("utf-8", "replace")
        text = re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>78]|\x1b\][^\x07]*\x07", "", text)
        return text.replace("\r\n", "\n").replace("\r", "\n")

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_in_terminal(*args: str | os.PathLike[str], cols: int = 80, rows: int = 40, cwd=None, env=None,
                    timeout: float = 180.0) -> tuple[int, Terminal]:
    """Run ``referee ARGS`` in a terminal to its end: (exit status, the terminal)."""
    term = Terminal([REFEREE, *args], cols=cols, rows=rows, cwd=cwd or ROOT, env=env)
    try:
        status = term.wait(timeout)
    finally:
        term.close()
    return status, term


#: Box-drawing characters that start and end a line of a rich table (default box).
_TABLE_START = "┏┃┡│└┌├╭"
_TABLE_END = "┓┃┩│┘┐┤╮"


def table_problems(lines: Sequence[str]) -> list[str]:
    """Lines of a table that is wider than the screen (a border line the terminal wrapped:
    it does not end with a border) or that has a column squeezed to nothing (two borders
    side by side)."""
    bad = []
    for line in lines:
        if line[:1] in _TABLE_START and line[-1:] not in _TABLE_END:
            bad.append(f"wrapped table line: {line!r}")
        elif line[:1] in _TABLE_START and any(p in line for p in ("┳┳", "╇╇", "┴┴", "┃┃", "││")):
            bad.append(f"a column squeezed to nothing: {line!r}")
    return bad


def assert_seen_whole(term: Terminal) -> None:
    """What every command must show a person: no internal error, no traceback, no
    cell cut with an ellipsis, no table wider than the screen or with an empty column."""
    text = term.text()
    assert "internal error" not in text and "Traceback" not in text, text
    assert "…" not in text, f"a cut cell on a {term.cols}-column screen:\n{text}"
    problems = table_problems(term.lines())
    assert not problems, f"on a {term.cols}-column screen: {problems[:3]}\n{text}"
