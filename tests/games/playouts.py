"""Seeded random playouts written as match-record entries, for the renderer tests."""

from __future__ import annotations

import random
from typing import Any

from referee.games import GameSpec, GameState


def event_entry(e) -> dict[str, Any]:
    return {"record": "event", "event": e.data, "to": None if e.to is None else list(e.to)}


def recorded_playout(spec: GameSpec, seed: int, options: dict | None, choice_seed: int) -> tuple[list[dict], GameState]:
    """Entries (events and decisions, as in a match record) of a game with
    uniformly random actions drawn from ``random.Random(choice_seed)``, and its final state."""
    state, events = spec.new_game(seed, options)
    entries = [event_entry(e) for e in events]
    rng = random.Random(choice_seed)
    n = 0
    while (seat := state.to_act()) is not None:
        legal = state.legal_actions()
        kind = state.decision()
        action = rng.choice(legal)
        n += 1
        entries.append({"record": "decision", "n": n, "seat": seat, "decision": kind,
                        "legal": legal, "action": action, "ms": 0.1})
        entries.extend(event_entry(e) for e in state.apply(action))
    return entries, state
