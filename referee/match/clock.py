"""Each seat's thinking time in a game (pure: fed durations, never reads a clock).

A seat has ``decision_s`` per decision and a bank of ``time_bank_s`` for the
whole game: a reply that takes longer than ``decision_s`` draws the excess
from the bank, and a reply that takes longer than both is late.  The runner
measures; this decides.
"""

from __future__ import annotations


class TimeBank:
    __slots__ = ("decision_s", "left")

    def __init__(self, decision_s: float, bank_s: float, seats: int) -> None:
        self.decision_s = decision_s
        self.left = [bank_s] * seats  # what is left of each seat's bank

    def allowed(self, seat: int) -> float:
        """The time the seat has for its next decision, bank included."""
        return self.decision_s + self.left[seat]

    def charge(self, seat: int, took: float) -> bool:
        """Account a reply that took ``took`` seconds: True if it was in time (an
        overrun is drawn from the bank), False if it was late (the bank is left as it was)."""
        over = took - self.decision_s
        if over <= 0:
            return True
        left = self.left[seat]
        if over > left:
            return False
        self.left[seat] = left - over
        return True
