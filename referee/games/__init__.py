"""Pure game engines and the explicit registry of games.

``GAMES`` maps a registry name ("back-alley", "schmier", "pegs-and-jokers")
to its ``GameSpec``.  The registry is explicit (no import-time registration)
and lazy: the names are listed here, and a game's engine package is imported
the first time its spec is looked up, so a command about one game (``replay
--verify`` of a Schmier record, say) never imports the other engines.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from .base import (
    Action,
    Event,
    GameError,
    GameSpec,
    GameState,
    IllegalAction,
    InconsistentView,
    InvalidAction,
    InvalidOptions,
    Outcome,
    ParsedAction,
    View,
    team_of_seat,
)

#: Registry name -> the engine package whose ``SPEC`` it is.  Explicit, like
#: chess.variant.VARIANTS: adding a game means adding its package here (and to
#: the conformance test's CONFIGS); tests/games/test_registry.py checks that
#: each package's ``SPEC.name`` is the name it is listed under.
_PACKAGES: dict[str, str] = {
    "back-alley": "referee.games.back_alley",
    "schmier": "referee.games.schmier",
    "pegs-and-jokers": "referee.games.pegs_and_jokers",
}


class _Registry(Mapping[str, GameSpec]):
    """A read-only mapping of name -> spec whose keys need no engine import."""

    def __init__(self, packages: Mapping[str, str]) -> None:
        self._packages = dict(packages)
        self._specs: dict[str, GameSpec] = {}

    def __getitem__(self, name: str) -> GameSpec:
        spec = self._specs.get(name)
        if spec is None:
            package = self._packages[name]  # KeyError for an unknown name, as a dict's
            spec = self._specs[name] = importlib.import_module(package).SPEC
        return spec

    def __contains__(self, name: object) -> bool:
        return name in self._packages

    def __iter__(self) -> Iterator[str]:
        return iter(self._packages)

    def __len__(self) -> int:
        return len(self._packages)

    def __repr__(self) -> str:
        return f"GAMES({', '.join(self._packages)})"


#: Registry name -> GameSpec (a read-only mapping; iterating it lists the names
#: without importing any engine).
GAMES: Mapping[str, GameSpec] = _Registry(_PACKAGES)


def get_game(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES)) or "none"
        raise InvalidOptions(f"unknown game {name!r} (known: {known})") from None


def start_game(name: str, seed: int, options: Mapping) -> tuple[GameSpec, dict, GameState, list[Event]]:
    """A recorded game at its start, as the runner began it: the game, its options
    normalised, the first state and the events it dealt.  ``GameError`` for an
    unknown game or options the game refuses."""
    spec = get_game(name)
    normalised = spec.normalize_options(dict(options))
    state, events = spec.new_game(seed, normalised)
    return spec, normalised, state, events


__all__ = [
    "Action", "Event", "GAMES", "GameError", "GameSpec", "GameState",
    "IllegalAction", "InconsistentView", "InvalidAction", "InvalidOptions", "Outcome", "ParsedAction", "get_game",
    "start_game", "team_of_seat", "View",
]
