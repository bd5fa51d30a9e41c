"""Pure game engines and the explicit registry of games.

``GAMES`` maps a registry name ("back-alley", "schmier", "pegs-and-jokers")
to its ``GameSpec``.  The registry is explicit (no import-time registration).
"""

from __future__ import annotations

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
    Renderer,
)

GAMES: dict[str, GameSpec] = {}
RENDERERS: dict[str, Renderer] = {}


def _register() -> None:
    # Each game package exposes SPEC (a GameSpec) and RENDERER (a Renderer).
    import importlib

    for module in ("back_alley", "schmier", "pegs_and_jokers"):
        try:
            mod = importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as exc:  # game not built yet
            if exc.name and exc.name.startswith(f"{__name__}.{module}"):
                continue
            raise
        GAMES[mod.SPEC.name] = mod.SPEC
        RENDERERS[mod.SPEC.name] = mod.RENDERER


_register()


def get_game(name: str) -> GameSpec:
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES)) or "none"
        raise InvalidOptions(f"unknown game {name!r} (known: {known})") from None


__all__ = [
    "Action", "Event", "GAMES", "RENDERERS", "GameError", "GameSpec", "GameState",
    "IllegalAction", "InvalidAction", "InvalidOptions", "Outcome", "Renderer", "get_game",
]
