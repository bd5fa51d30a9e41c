"""The bytes of record lines as the match runner writes them, without the line models.

``referee.match.record`` holds the record's models (pydantic, the reading
side) and re-exports these; they live here so that the runner's hot path and
``replay --verify``'s fast path (``referee.match.verify``), which compare or
write bytes, need not build the models at start-up.
"""

from __future__ import annotations

from pydantic_core import to_json

RECORD_FORMAT = "referee-record/1"

_TO_TAILS: dict[tuple[int, ...] | None, bytes] = {None: b',"to":null}\n'}  # a handful of seat sets per game


def event_entry_bytes(event_json: bytes, to: tuple[int, ...] | None) -> bytes:
    """A record ``event`` line from an event already encoded once."""
    tail = _TO_TAILS.get(to)
    if tail is None:
        assert to is not None  # None's tail is there from the start
        tail = _TO_TAILS[to] = b',"to":' + to_json(list(to)) + b"}\n"
    return b'{"record":"event","event":' + event_json + tail
