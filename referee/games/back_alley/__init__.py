"""Back Alley (RULES.md §1): 4 players in 2 teams, 25 deals of 13 … 1 … 13 cards."""

from .rules import SPEC, BackAlleySpec, BackAlleyState

__all__ = ["SPEC", "BackAlleySpec", "BackAlleyState"]
