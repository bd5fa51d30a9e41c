"""Presentation of typed match records: text per game, and what one seat saw.

``RENDERERS`` maps a game's registry name to its ``Renderer`` (``base.py``),
explicit like ``referee.games.GAMES``.  Everything here reads the typed lines
of ``referee.match.record`` and the games' notation; nothing here is needed to
play a game, and the games layer knows nothing of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.match.record import DecisionLine, Entry, EventLine, FaultLine

from . import back_alley, pegs_and_jokers, schmier
from .base import Renderer, events

#: Registry name -> Renderer (pure text for `referee play` and `referee replay`).
RENDERERS: dict[str, Renderer] = {
    "back-alley": back_alley.RENDERER,
    "schmier": schmier.RENDERER,
    "pegs-and-jokers": pegs_and_jokers.RENDERER,
}


def entries_for_seat(entries: Sequence[Entry], seat: int) -> list[Entry]:
    """Only what ``seat`` could know: public events, its own private events, its own
    decisions, and faults (another seat's without its stderr lines)."""
    out: list[Entry] = []
    for e in entries:
        if isinstance(e, EventLine):
            if e.to is None or seat in e.to:
                out.append(e)
        elif isinstance(e, DecisionLine):
            if e.seat == seat:
                out.append(e)
        elif isinstance(e, FaultLine):
            out.append(e if e.seat == seat else e.model_copy(update={"stderr_tail": []}))
    return out


def public_entries(entries: Sequence[Entry]) -> list[Entry]:
    return [e for e in entries if isinstance(e, EventLine) and e.to is None]


__all__ = ["RENDERERS", "Renderer", "entries_for_seat", "events", "public_entries"]
