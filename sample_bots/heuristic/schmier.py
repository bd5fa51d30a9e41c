#!/usr/bin/env python3
"""A Schmier bot with simple, readable rules — a starting point to improve.

    referee play schmier --bot ".venv/bin/python sample_bots/heuristic/schmier.py" \\
                         --bot "python3 sample_bots/random_bot.py" \\
                         --bot "python3 sample_bots/random_bot.py"

Needs the project installed in that Python (``pip install -e .``, as the README's set-up does in ``.venv``) for
``protocol.bot``; it does not use the referee's engine.  It decides from the
``state`` of each request alone (docs/games/schmier.md).

Bidding: for each suit, add up the points the hand can expect with that suit
as trump — High and Low are sure if we hold the Ace or the 2 of trump (the
player who *plays* them scores them), a Bauer or the Joker counts more when
higher trumps protect it, top trumps capture the cards others must play, and
the dealer, who takes the rest of the stock and keeps the best six cards,
expects more.  Bid the smallest legal number the estimate covers (points
won above the bid score anyway), never against a partner who holds the bid.

Trump: the suit with the best estimate.  Exchange: throw away non-trumps
that do not win tricks (keep side Aces) to draw for trumps; the dealer keeps
trumps first, then the side cards most likely to win.

Play: win tricks that hold points as cheaply as possible, lead top trumps to
pull the others' Bauers and Joker, and "schmier" — throw the Joker, a Bauer
or a Ten on a trick that partner is sure to win, never on one the other
teams win.
"""

from __future__ import annotations

import sys

from protocol.bot import Request, run

RANKS = "23456789TJQKA"
SUITS = "CDHS"
JOKER = "JK"
DECK = [r + s for s in SUITS for r in RANKS] + [JOKER]
GAME_VALUE = {"A": 4, "K": 3, "Q": 2, "J": 1, "T": 10}
#: Points a bidder counts on from its partner's hand, which it cannot see.
PARTNER_SHARE = 0.8


def left_suit(trump: str) -> str:
    """The other suit of the same colour: C<->S, D<->H."""
    return {"C": "S", "S": "C", "D": "H", "H": "D"}[trump]


class Cards:
    """Card facts that depend on the trump suit (SC-4)."""

    def __init__(self, trump: str) -> None:
        self.trump = trump
        self.ace, self.two = "A" + trump, "2" + trump
        self.right, self.left = "J" + trump, "J" + left_suit(trump)

    def is_trump(self, card: str) -> bool:
        return card == JOKER or card == self.left or card[1] == self.trump

    def suit(self, card: str) -> str:
        return self.trump if self.is_trump(card) else card[1]

    def trump_rank(self, card: str) -> int:
        """SC-4.2: A 14, K 13, Q 12, Right 11, Left 10, T 9 … 2 1, JK 0."""
        if card == JOKER:
            return 0
        if card == self.right:
            return 11
        if card == self.left:
            return 10
        r = RANKS.index(card[0])
        return r + 1 if r < 9 else r + 2

    def power(self, card: str, led: str | None = None) -> int:
        """Higher wins a trick led in ``led``; -1 if the card neither follows nor trumps."""
        if self.is_trump(card):
            return 100 + self.trump_rank(card)
        if led is None or card[1] == led:
            return RANKS.index(card[0])
        return -1

    def capture_value(self, card: str) -> float:
        """What the trick's winner gains from this card: Right, Left and Joker are a
        point each (SC-7.3-7.5); card count counts towards Game (SC-7.6)."""
        value = 1.0 if card in (self.right, self.left, JOKER) else 0.0
        return value + 0.04 * (1 if card == JOKER else GAME_VALUE.get(card[0], 0))


# --- bidding and trump -------------------------------------------------------


def expected_points(hand: list[str], trump: str, dealer: bool) -> float:
    """Points this hand should bring its team with ``trump`` as trump."""
    k = Cards(trump)
    trumps = [c for c in hand if k.is_trump(c)]
    tops = sum(1 for c in trumps if k.trump_rank(c) >= 12)  # A, K, Q of trump
    points = 0.0
    if k.ace in hand:
        points += 1.0  # High: whoever plays the Ace scores it
    if k.two in hand:
        points += 1.0  # Low: likewise the 2
    above_right = sum(1 for c in trumps if k.trump_rank(c) > 11)
    if k.right in hand:
        points += min(1.0, 0.45 + 0.2 * above_right)
    if k.left in hand:
        points += min(1.0, 0.35 + 0.2 * sum(1 for c in trumps if k.trump_rank(c) > 10))
    if JOKER in hand:
        points += min(0.9, 0.25 + 0.15 * tops)
    # High trumps capture the Bauers and the Joker that others must play.
    points += 0.3 * tops + 0.1 * max(0, len(trumps) - 2)
    # Game: tens and trump length win card count.
    points += 0.1 * sum(1 for c in hand if c[0] == "T") + 0.05 * len(trumps)
    # Exchange: each discarded non-trump draws a card that may be a trump.
    points += 0.12 * min(3, len(hand) - len(trumps))
    if dealer:
        points += 0.5  # takes the rest of the stock and keeps the best six
    return points


def best_trump(hand: list[str], dealer: bool) -> tuple[str, float]:
    return max(((s, expected_points(hand, s, dealer)) for s in SUITS), key=lambda x: x[1])


def bid(state: dict, legal: list[str]) -> str:
    partner = (state["seat"] + 3) % 6
    high = [b for b in state["bids"] if b["bid"] != "pass"]
    if high and high[-1]["seat"] == partner:
        return "pass"  # partner holds the contract; do not raise our own target
    _, estimate = best_trump(state["hand"], state["dealer"] == state["seat"])
    # Partner's unseen hand brings something too: about PARTNER_SHARE points.
    numbers = [int(b) for b in legal if b != "pass"]
    affordable = [n for n in numbers if n <= estimate + PARTNER_SHARE]
    return str(min(affordable)) if affordable else "pass"


# --- exchange ------------------------------------------------------------------


def keep_value(k: Cards, card: str) -> float:
    """How much we want to keep a card in hand."""
    if k.is_trump(card):
        return 100 + k.trump_rank(card)
    return {"A": 12, "K": 6, "Q": 3, "T": 2.5}.get(card[0], RANKS.index(card[0]) / 10)


def discard(state: dict, legal: list[str]) -> str:
    """A non-dealer: discard side cards other than Aces, lowest first, to draw for trumps."""
    k = Cards(state["trump"])
    cards = [c for c in legal if c != "done" and c[0] != "A"]
    if not cards:
        return "done"
    return min(cards, key=lambda c: keep_value(k, c))


def dealer_discard(state: dict, legal: list[str]) -> str:
    k = Cards(state["trump"])
    return min(legal, key=lambda c: keep_value(k, c))


# --- play ------------------------------------------------------------------------


class Trick:
    """The state of play seen from our seat."""

    def __init__(self, state: dict) -> None:
        self.k = Cards(state["trump"])
        self.seat = state["seat"]
        self.partner = (self.seat + 3) % 6
        self.hand = state["hand"]
        trick = state["trick"]
        self.leader = trick["leader"]
        self.cards = trick["cards"]
        played = {c for t in state["tricks"] for c in t["cards"]} | set(self.cards)
        #: cards that may be in another hand (or in the stock / face-down discards)
        self.unseen = set(DECK) - set(self.hand) - played - set(state["my_discards"])
        self.voids: dict[int, set[str]] = {s: set() for s in range(6)}
        for t in state["tricks"]:
            led = self.k.suit(t["cards"][0])
            for i, c in enumerate(t["cards"][1:], start=1):
                if self.k.suit(c) != led:
                    self.voids[(t["leader"] + i) % 6].add(led)
        self.after = [(self.seat + i) % 6 for i in range(1, 6 - len(self.cards))]

    def on_my_team(self, seat: int) -> bool:
        return seat % 3 == self.seat % 3

    def holds(self, card: str, led: str) -> bool:
        """Would this card, winning now, beat whatever the opponents still to play hold?"""
        opponents = [s for s in self.after if not self.on_my_team(s)]
        if not opponents:
            return True
        k = self.k
        p = k.power(card, led)
        if any(k.is_trump(c) and k.power(c) > p for c in self.unseen) and (
                k.is_trump(card) or any(led in self.voids[s] for s in opponents)):
            return False
        if not k.is_trump(card):
            return not any(c[1] == led and not k.is_trump(c) and k.power(c, led) > p for c in self.unseen)
        return True


def smear_value(k: Cards, card: str) -> float:
    """What a card adds to a trick partner wins (and what we keep from the others)."""
    if card == JOKER:
        return 3.0
    if card in (k.right, k.left):
        return 1.5
    if card == k.two:
        return 0.5  # Low is ours whoever wins; a weak trump is best gone
    return GAME_VALUE.get(card[0], 0) / 10 if not k.is_trump(card) else -1.0


def cheap(k: Cards, card: str) -> float:
    """Cost of throwing a card on a trick the others win: point cards cost most."""
    if card == k.two:
        return -1.0  # Low scores for us whoever wins the trick
    cost = keep_value(k, card) / 10 + 20 * k.capture_value(card)
    return cost


def lead(t: Trick, legal: list[str]) -> str:
    k = t.k
    trumps_out = any(k.is_trump(c) for c in t.unseen)
    sure_trumps = [c for c in legal if k.is_trump(c) and t.holds(c, k.trump)]
    if sure_trumps and trumps_out:
        # Pull trumps with a top trump: the others must follow with theirs.
        return max(sure_trumps, key=k.power)
    side_tops = [c for c in legal if not k.is_trump(c) and t.holds(c, c[1])]
    if side_tops:
        return max(side_tops, key=lambda c: GAME_VALUE.get(c[0], 0))
    return min(legal, key=lambda c: cheap(k, c))


def follow(t: Trick, legal: list[str]) -> str:
    k = t.k
    led = k.suit(t.cards[0])
    powers = [k.power(c, led) for c in t.cards]
    best = max(range(len(t.cards)), key=powers.__getitem__)
    winner = (t.leader + best) % 6
    trick_value = sum(k.capture_value(c) for c in t.cards)
    if t.on_my_team(winner) and t.holds(t.cards[best], led):
        return max(legal, key=lambda c: (smear_value(k, c), -k.power(c)))
    winners = [c for c in legal if k.power(c, led) > powers[best]]
    safe = [c for c in winners if t.holds(c, led)]
    if safe:
        # Take it; with nothing in it yet, only with a card that costs little.
        choice = min(safe, key=lambda c: k.power(c, led))
        if trick_value > 0.1 or not t.after or k.capture_value(choice) < 0.5:
            return choice
    if winners and (not t.after or trick_value >= 1.0):
        return min(winners, key=lambda c: k.power(c, led))
    return min(legal, key=lambda c: (cheap(k, c), k.power(c)))


def decide(request: Request) -> str:
    legal = request.legal
    if len(legal) == 1:
        return legal[0]
    state = request.state
    decision = request.decision
    if decision == "bid":
        return bid(state, legal)
    if decision == "trump":
        return best_trump(state["hand"], False)[0]
    if decision == "discard":
        return discard(state, legal)
    if decision == "dealer_discard":
        return dealer_discard(state, legal)
    t = Trick(state)
    return lead(t, legal) if not t.cards else follow(t, legal)


if __name__ == "__main__":
    sys.exit(run(decide, name="heuristic-schmier-v1"))
