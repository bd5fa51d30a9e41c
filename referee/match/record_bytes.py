"""The bytes of record lines as the match runner writes them, without the line models.

``referee.match.record`` holds the record's models (pydantic, the reading
side) and re-exports these; they live here so that the runner's hot path and
``replay --verify``'s fast path (``referee.match.verify``), which compare or
write bytes, need not build the models at start-up.
"""

from __future__ import annotations

from pydantic_core import to_json

RECORD_FORMAT = "referee-record/1"


def decision_entry_bytes(n: int, seat: int, decision: str, legal_json: bytes, action: str, ms: float) -> bytes:
    """A record ``decision`` line, with the legal list already encoded once (for the request).
    The bytes ``to_json`` gives for the line's dict (``DecisionLine``'s fields in order)."""
    return b'{"record":"decision","n":%d,"seat":%d,"decision":%b,"legal":%b,"action":%b,"ms":%b}\n' % (
        n, seat, to_json(decision), legal_json, to_json(action), to_json(ms))


_TO_TAILS: dict[tuple[int, ...] | None, bytes] = {None: b',"to":null}\n'}  # a handful of seat sets per game


def event_entry_bytes(event_json: bytes, to: tuple[int, ...] | None) -> bytes:
    """A record ``event`` line from an event already encoded once."""
    tail = _TO_TAILS.get(to)
    if tail is None:
        assert to is not None  # None's tail is there from the start
        tail = _TO_TAILS[to] = b',"to":' + to_json(list(to)) + b"}\n"
    return b'{"record":"event","event":' + event_json + tail
