"""Seeded random playouts written as typed match-record entries, for the renderer tests."""

from __future__ import annotations

import random

from referee.games import GameSpec, GameState
from referee.match.record import DecisionLine, Entry, EventLine


def event_entry(e) -> EventLine:
    return EventLine(event=e.data, to=None if e.to is None else list(e.to))


def recorded_playout(spec: GameSpec, seed: int, options: dict | None,
                     choice_seed: int) -> tuple[list[Entry], GameState]:
    """Entries (events and decisions, as in a match record) of a game with
    uniformly random actions drawn from ``random.Random(choice_seed)``, and its final state."""
    state, events = spec.new_game(seed, options)
    entries: list[Entry] = [event_entry(e) for e in events]
    rng = random.Random(choice_seed)
    n = 0
    while (seat := state.to_act()) is not None:
        legal = state.legal_actions()
        kind = state.decision()
        action = rng.choice(legal)
        n += 1
        entries.append(DecisionLine(n=n, seat=seat, decision=kind, legal=legal, action=action, ms=0.1))
        entries.extend(event_entry(e) for e in state.apply(action))
    return entries, state
