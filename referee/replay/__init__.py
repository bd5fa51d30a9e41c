"""Presentation of typed match records: text per game, and what one seat saw.

``RENDERERS`` maps a game's registry name to its ``Renderer`` (``base.py``),
explicit like ``referee.games.GAMES``.  Everything here reads the typed lines
of ``referee.match.record`` and the games' notation; nothing here is needed to
play a game, and the games layer knows nothing of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from referee.games import GAMES
from referee.match.record import DecisionLine, Entry, EventLine, FaultLine, HeaderLine

from . import back_alley, pegs_and_jokers, schmier
from .base import Renderer, TurnRenderer, events

#: Registry name -> Renderer (pure text for `referee play` and `referee replay`).
RENDERERS: dict[str, Renderer] = {
    "back-alley": back_alley.RENDERER,
    "schmier": schmier.RENDERER,
    "pegs-and-jokers": pegs_and_jokers.RENDERER,
}


def entries_for_seat(entries: Sequence[Entry], seat: int) -> list[Entry]:
    """Only what ``seat`` could know: public events, its own private events, its own
    decisions, and faults (another seat's without its stderr lines, its legal list and its
    output: the legal list names cards of its hand, as the HTML replay's seat view hides them)."""
    out: list[Entry] = []
    for e in entries:
        if isinstance(e, EventLine):
            if e.to is None or seat in e.to:
                out.append(e)
        elif isinstance(e, DecisionLine):
            if e.seat == seat:
                out.append(e)
        elif isinstance(e, FaultLine):
            out.append(e if e.seat == seat else e.model_copy(
                update={"stderr_tail": [], "legal": None, "output": None, "output_bytes": None}))
    return out


def rules_version_problem(header: HeaderLine) -> str | None:
    """Why a record cannot be shown (one line), or ``None``.

    The renderers read the events of the game's current ``rules_version``: a
    record written under another version (rules version 1 had other event
    names, ``game_end``, ``all_pass``, a private ``draw``) is refused, not
    shown wrong.  The rules themselves did not change from 1 to 2: replaying
    the game's seed and decisions with this referee gives a new record."""
    spec = GAMES.get(header.game)
    if spec is None or header.rules_version == spec.rules_version:
        return None
    version = repr(header.rules_version) if header.rules_version is not None else "(none given)"
    return (f"record uses {spec.title} rules version {version}; this referee reads "
            f"version {spec.rules_version!r} (its events differ), so it cannot show or verify it")


def public_entries(entries: Sequence[Entry]) -> list[Entry]:
    return [e for e in entries if isinstance(e, EventLine) and e.to is None]


__all__ = [
    "RENDERERS", "Renderer", "TurnRenderer", "entries_for_seat", "events", "public_entries",
    "rules_version_problem",
]
