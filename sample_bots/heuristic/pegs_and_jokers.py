#!/usr/bin/env python3
"""A Pegs and Jokers bot with simple, readable rules — a starting point to improve.

    referee play pegs-and-jokers --bot ".venv/bin/python sample_bots/heuristic/pegs_and_jokers.py" \\
                                 --bot "python3 sample_bots/random_bot.py"

Needs the project installed in that Python (``pip install -e .``, as the README's set-up does in ``.venv``) for
``protocol.bot``; it does not use the referee's engine.  It decides from the
``state`` of each request alone (docs/games/pegs-and-jokers.md).

The idea is one-move look-ahead with a position score.  Every legal action
is applied to a copy of the board (moves, 7-split parts and hits, PJ-7), and
the resulting board is scored for our team minus the other team:

* a peg is worth more the nearer it is to its home: start < come-out hole
  < … < in-spot < home hole 1 < … < home hole 5 — so getting out, moving on,
  entering home and going deep into home all score, and an ``8`` played
  backwards from the come-out hole (landing just behind the in-spot) is seen
  to be a great move;
* a peg that an opponent can hit next turn (1 to 10 holes behind it, 8 holes
  ahead of it, on an opponent's come-out hole while it has pegs in start, or
  anywhere for a joker) loses part of its worth, in proportion to how
  likely that is and how much it would lose;
* hitting an opponent removes its peg's worth; hitting a teammate sends it to
  its in-spot, which the score sees as a gift.

Every action spends one card, so the card's worth in hand is subtracted:
jokers are kept for a hit or jump that is worth it, 7s and 8s are kept over
plain cards, and out-cards (A, K, Q, J) are kept while pegs wait in start.
A forced discard thus throws the least useful card.
"""

from __future__ import annotations

import sys

from protocol.bot import Request, run

HOME_HOLES = 5
START_VALUE = 0.0
TRACK_BASE = 20.0  # worth of a peg just out, on top of the steps it has gone
HOME_BASE = 40.0  # worth of a home peg above a track peg on its in-spot
HOME_STEP = 3.0  # each home hole deeper

#: Chance that one opponent can and will move a peg exactly n holes forward next turn
#: (one card rank moves n: 2 … 6, 9; A moves 1; 7 moves 7 or its split parts;
#: T, J, Q, K move 10).  A hand of 6 from 12 copies of a rank in 162 cards holds
#: one with chance ~0.37; a sensible opponent hits about half the time it can.
FORWARD_THREAT = {1: 0.25, 2: 0.2, 3: 0.2, 4: 0.2, 5: 0.2, 6: 0.2, 7: 0.25, 9: 0.2, 10: 0.45}
BACK8_THREAT = 0.2
COME_OUT_THREAT = 0.4  # A, K, Q or J bringing a peg out onto ours
JOKER_THREAT = 0.03  # a joker can land anywhere; each opponent holds one ~20 % of the time


class Board:
    """Peg positions of every colour, as the observation gives them, plus the move rules
    needed to apply a legal action (the list is already legal: no checks here)."""

    def __init__(self, state: dict) -> None:
        self.n = state["players"]
        self.L = state["holes"]
        self.come_out: list[int] = state["come_out"]
        self.in_spot: list[int] = state["in_spot"]
        self.pegs: list[list[str]] = [list(p) for p in state["pegs"]]

    def copy(self) -> Board:
        other = object.__new__(Board)
        other.n, other.L, other.come_out, other.in_spot = self.n, self.L, self.come_out, self.in_spot
        other.pegs = [list(p) for p in self.pegs]
        return other

    def occupant(self, hole: str) -> int | None:
        for colour, pegs in enumerate(self.pegs):
            if hole in pegs:
                return colour
        return None

    def move(self, colour: int, src: str, dst: str) -> None:
        """One part of a move (PJ-5, PJ-7): ``colour``'s peg on ``src`` goes to ``dst``."""
        hit = self.occupant(dst) if dst.startswith("T") else None
        pegs = self.pegs[colour]
        pegs[pegs.index(src)] = dst
        if hit is None or hit == colour:
            return
        hit_pegs = self.pegs[hit]
        if (hit - colour) % 2:  # an opponent goes back to start (PJ-7.1)
            hit_pegs[hit_pegs.index(dst)] = "S"
            return
        spot = f"T{self.in_spot[hit]}"  # a teammate goes to its in-spot (PJ-7.2) ...
        there = self.occupant(spot)
        hit_pegs[hit_pegs.index(dst)] = spot
        if there is not None and there != hit:  # ... where an opponent goes to start
            self.pegs[there][self.pegs[there].index(spot)] = "S"

    def apply(self, action: str) -> None:
        if action.startswith("discard"):
            return
        for part in action.split(" ", 1)[1].split(","):
            colour, rest = part.split(":")
            src, dst = rest.split("-")
            self.move(int(colour), src, dst)

    # -- scoring ------------------------------------------------------------------

    def worth(self, colour: int, pos: str) -> float:
        """How far along a peg is: start 0, then the track, then the home holes."""
        if pos == "S":
            return START_VALUE
        if pos[0] == "H":
            return TRACK_BASE + self.L + HOME_BASE + HOME_STEP * int(pos[1:])
        to_in_spot = (self.in_spot[colour] - int(pos[1:])) % self.L
        return TRACK_BASE + self.L - to_in_spot

    def danger(self, colour: int, hole: int) -> float:
        """Chance that an opponent of ``colour`` hits the peg on ``hole`` next turn."""
        risk = 0.0
        for other, pegs in enumerate(self.pegs):
            if (other - colour) % 2 == 0:
                continue
            if any(p[0] == "T" for p in pegs) or "S" in pegs:
                risk += JOKER_THREAT
            if "S" in pegs and self.come_out[other] == hole:
                risk += COME_OUT_THREAT
            for p in pegs:
                if p[0] != "T":
                    continue
                behind = (hole - int(p[1:])) % self.L
                risk += FORWARD_THREAT.get(behind, 0.0)
                if behind == self.L - 8:  # 8 holes ahead of us: back 8 lands here
                    risk += BACK8_THREAT
        return min(risk, 0.9)

    def score(self, team: int) -> float:
        """Our team's pegs minus theirs, our pegs discounted by the risk of a hit."""
        total = 0.0
        for colour, pegs in enumerate(self.pegs):
            sign = 1.0 if colour % 2 == team else -1.0
            for pos in pegs:
                value = self.worth(colour, pos)
                if sign > 0 and pos[0] == "T":
                    value -= self.danger(colour, int(pos[1:])) * (value - START_VALUE)
                total += sign * value
        return total


def card_worth(card: str, pegs_in_start: int) -> float:
    """What keeping this card in hand is worth, in the units of ``Board.score``."""
    if card == "JK":
        return 30.0
    rank = card[0]
    if rank == "7":
        return 6.0  # splits: two pegs at once, or exact home entries
    if rank == "8":
        return 5.0  # backwards: from the come-out hole to just behind home, or hits
    if rank in "AKQJ":
        return 8.0 if pegs_in_start else 2.0  # the only way out of start
    return 1.0


def card_of(action: str) -> str:
    return action.split(" ")[1] if action.startswith("discard") else action[:2]


def decide(request: Request) -> str:
    legal = request.legal
    if len(legal) == 1:
        return legal[0]
    state = request.state
    board = Board(state)
    team = state["seat"] % 2
    in_start = state["pegs"][state["colour"]].count("S")
    base = board.score(team)
    best, best_value = legal[0], float("-inf")
    for action in legal:
        after = board.copy()
        after.apply(action)
        value = after.score(team) - base - card_worth(card_of(action), in_start)
        if value > best_value:
            best, best_value = action, value
    return best


if __name__ == "__main__":
    sys.exit(run(decide, name="heuristic-pegs-and-jokers-v1"))
