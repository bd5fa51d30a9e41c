"""Each seat's thinking time in a game (pure: fed durations, never reads a clock).

A seat has ``decision_s`` per decision and a bank of ``time_bank_s`` for the
whole game: a reply that takes longer than ``decision_s`` draws the excess
from the bank, and a reply that takes longer than both is late.  The runner
measures; this decides.
"""

from __future__ import annotations

from collections.abc import Sequence


class TimeBank:
    """``decision_s`` and ``bank_s`` are one value for every seat, or one per seat."""

    __slots__ = ("decision_s", "left", "allowed")

    def __init__(self, decision_s: float | Sequence[float], bank_s: float | Sequence[float], seats: int) -> None:
        self.decision_s = list(decision_s) if isinstance(decision_s, Sequence) else [decision_s] * seats
        self.left = list(bank_s) if isinstance(bank_s, Sequence) else [bank_s] * seats  # each seat's bank left
        if len(self.decision_s) != seats or len(self.left) != seats:
            raise ValueError(f"a time limit per seat: {seats} values")
        # The time each seat has for its next decision, bank included (read per decision, so kept, not computed).
        self.allowed = [d + b for d, b in zip(self.decision_s, self.left, strict=True)]

    def charge(self, seat: int, took: float) -> bool:
        """Account a reply that took ``took`` seconds: True if it was in time (an
        overrun is drawn from the bank), False if it was late (the bank is left as it was)."""
        over = took - self.decision_s[seat]
        if over <= 0:
            return True
        left = self.left[seat]
        if over > left:
            return False
        self.left[seat] = left = left - over
        self.allowed[seat] = self.decision_s[seat] + left
        return True
