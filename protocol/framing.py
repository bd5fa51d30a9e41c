"""Line framing without I/O (h11 style): bytes in, complete lines out.

``LineBuffer.feed(data)`` returns the complete lines found so far (without
the newline).  A line longer than ``max_line_bytes`` never accumulates: the
buffer yields ``TOO_LONG`` once for it and drops its bytes until the next
newline, so a bot that writes 100 MB with no newline costs at most
``max_line_bytes`` of memory.
"""

from __future__ import annotations

from typing import Final


class _TooLong:
    __slots__ = ()

    def __repr__(self) -> str:
        return "TOO_LONG"


TOO_LONG: Final = _TooLong()


class LineBuffer:
    __slots__ = ("max_line_bytes", "_buf", "_discarding")

    def __init__(self, max_line_bytes: int = 1 << 20) -> None:
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()
        self._discarding = False

    def whole_line(self, data: bytes) -> bytes | None:
        """``data`` as one line (without its newline) if it is exactly one complete line
        within the limit and nothing is pending; else None, and nothing is taken (``feed`` it).
        The per-decision case, a reply in one read: one search, one slice."""
        if self._buf or self._discarding:
            return None
        last = len(data) - 1
        if last >= 0 and last <= self.max_line_bytes and data.find(b"\n") == last:
            return data[:last]
        return None

    def feed(self, data: bytes) -> list[bytes | _TooLong]:
        if (line := self.whole_line(data)) is not None:
            return [line]
        out: list[bytes | _TooLong] = []
        start = 0
        n = len(data)
        while start < n:
            nl = data.find(b"\n", start)
            if nl < 0:
                chunk = data[start:]
                if not self._discarding:
                    if len(self._buf) + len(chunk) > self.max_line_bytes:
                        self._buf.clear()
                        self._discarding = True
                        out.append(TOO_LONG)
                    else:
                        self._buf += chunk
                break
            if self._discarding:
                self._discarding = False
            elif self._buf:
                if len(self._buf) + (nl - start) > self.max_line_bytes:
                    out.append(TOO_LONG)
                else:
                    self._buf += data[start:nl]
                    out.append(bytes(self._buf))
                self._buf.clear()
            else:
                if nl - start > self.max_line_bytes:
                    out.append(TOO_LONG)
                else:
                    out.append(data[start:nl])
            start = nl + 1
        return out

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held in the buffer."""
        return len(self._buf)
