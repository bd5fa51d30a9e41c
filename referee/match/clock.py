"""Each seat's thinking time in a game (pure: fed durations, never reads a clock).

A seat has ``decision_s`` per decision and a bank of ``time_bank_s`` for the
whole game: a reply that takes longer than ``decision_s`` draws the excess
from the bank, and a reply that takes longer than both is late.  The runner
measures; this decides.
"""

from __future__ import annotations


class TimeBank:
    __slots__ = ("decision_s", "left", "allowed")

    def __init__(self, decision_s: float, bank_s: float, seats: int) -> None:
        self.decision_s = decision_s
        self.left = [bank_s] * seats  # what is left of each seat's bank
        # The time each seat has for its next decision, bank included (read per decision, so kept, not computed).
        self.allowed = [decision_s + bank_s] * seats

    def charge(self, seat: int, took: float) -> bool:
        """Account a reply that took ``took`` seconds: True if it was in time (an
        overrun is drawn from the bank), False if it was late (the bank is left as it was)."""
        over = took - self.decision_s
        if over <= 0:
            return True
        left = self.left[seat]
        if over > left:
            return False
        self.left[seat] = left = left - over
        self.allowed[seat] = self.decision_s + left
        return True
