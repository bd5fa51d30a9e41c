"""Pegs and Jokers (RULES.md §3): 4, 6 or 8 players in 2 teams race 5 pegs home."""

from .rules import SPEC, PegsAndJokersSpec, PegsAndJokersState

__all__ = ["SPEC", "PegsAndJokersSpec", "PegsAndJokersState"]
