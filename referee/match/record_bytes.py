"""The bytes of record lines as the match runner writes them, without the line models.

``referee.match.record`` holds the record's models (pydantic, the reading
side) and re-exports these; they live here so that the runner's hot path and
``replay --verify``'s fast path (``referee.match.verify``), which compare or
write bytes, need not build the models at start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import to_json

RECORD_FORMAT = "referee-record/1"


def decision_entry_bytes(n: int, seat: int, decision: str, legal_json: bytes, action: str, ms: float) -> bytes:
    """A record ``decision`` line, with the legal list already encoded once (for the request).
    The bytes ``to_json`` gives for the line's dict (``DecisionLine``'s fields in order)."""
    return b'{"record":"decision","n":%d,"seat":%d,"decision":%b,"legal":%b,"action":%b,"ms":%b}\n' % (
        n, seat, to_json(decision), legal_json, to_json(action), to_json(ms))


def seats_problem(spec: Any, options: Mapping[str, Any], seats: Sequence[tuple[Any, Any]]) -> str | None:
    """Why a header's seats, as (seat, team) pairs, are not those of ``spec`` with (normalised)
    ``options``, or None when they are: as many as the game seats, numbered in order, each in its team."""
    want = spec.num_seats(options)
    if len(seats) != want:
        return f"{len(seats)} seats, the game with these options has {want}"
    for i, (seat, team) in enumerate(seats):
        if seat != i or team != (want_team := spec.team_of(i, options)):
            return f"seats.{i}: seat {seat!r} of team {team!r}, the game has seat {i} in team {want_team}"
    return None


_TO_TAILS: dict[tuple[int, ...] | None, bytes] = {None: b',"to":null}\n'}  # a handful of seat sets per game


def event_entry_bytes(event_json: bytes, to: tuple[int, ...] | None) -> bytes:
    """A record ``event`` line from an event already encoded once."""
    tail = _TO_TAILS.get(to)
    if tail is None:
        assert to is not None  # None's tail is there from the start
        tail = _TO_TAILS[to] = b',"to":' + to_json(list(to)) + b"}\n"
    return b'{"record":"event","event":' + event_json + tail
