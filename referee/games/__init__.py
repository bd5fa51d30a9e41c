"""Pure game engines and the explicit registry of games.

``GAMES`` maps a registry name ("back-alley", "schmier", "pegs-and-jokers")
to its ``GameSpec``.  The registry is explicit (no import-time registration).
"""

from __future__ import annotations

from . import back_alley, pegs_and_jokers, schmier
from .base import (
    Action,
    Event,
    GameError,
    GameSpec,
    GameState,
    IllegalAction,
    InvalidAction,
    InvalidOptions,
    Outcome,
    ParsedAction,
    team_of_seat,
)

#: Registry name -> GameSpec.  Explicit, like chess.variant.VARIANTS: adding a
#: game means adding its package here (and to the conformance test's CONFIGS).
GAMES: dict[str, GameSpec] = {
    m.SPEC.name: m.SPEC for m in (back_alley, schmier, pegs_and_jokers)
}


def get_game(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES)) or "none"
        raise InvalidOptions(f"unknown game {name!r} (known: {known})") from None


__all__ = [
    "Action", "Event", "GAMES", "GameError", "GameSpec", "GameState",
    "IllegalAction", "InvalidAction", "InvalidOptions", "Outcome", "ParsedAction", "get_game",
    "team_of_seat",
]
