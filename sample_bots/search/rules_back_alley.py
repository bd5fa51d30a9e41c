# A frozen copy of sample_bots/heuristic/back_alley.py (as of commit fc82965), the rules search-v1
# uses where it does not search (priors, rollout and opponent policies, evaluation).
# Frozen so that search-v1 plays the same when the heuristic bot is improved (a rating is
# anchored to a version), and inside the search bot's own folder, the one folder of
# sample_bots/ the sandbox lets it read (docs/security.md).
"""A Back Alley bot with simple, readable rules — a starting point to improve.

    referee play back-alley --bot ".venv/bin/python sample_bots/heuristic/back_alley.py" \\
                            --bot "python3 sample_bots/random_bot.py"

Needs the project installed in that Python (``pip install -e .``, as the README's set-up does in ``.venv``) for
``protocol.bot``; it does not use the referee's engine.  It decides from the
``state`` of each request alone (docs/games/back-alley.md), so it asks for no
events.

Bidding (``bid``): estimate the tricks this hand will take, card by card —
top trumps are sure tricks, lower trumps count when protected by length,
side-suit aces and guarded kings count for less when the deal is short or
the suit long (it may be ruffed), spare trumps with a short side suit may
ruff.  Bid the estimate rounded down: a missed contract costs ``5·b`` and an
overtrick earns only 1, so the bid is what the hand takes with room to spare
(against the random bot it makes about 95 % of its contracts).  Bid
``board`` when the hand is nothing but the top trumps in play, or, with one
card each, when that card more likely wins than not.

Play (``play``): more tricks are always better for our team — they make our
contract, set theirs, and overtricks score — so the bot wins tricks cheaply,
saves high cards when partner already wins, and knows the Bloopers:
leading ``BJ`` pulls every other player's highest trump, and leading ``LJ``
makes them play their lowest, so ``LJ`` led almost always wins.
"""

from __future__ import annotations

import sys

from protocol.bot import Request, run

RANKS = "23456789TJQKA"
SUITS = "SHCD"
JOKERS = ("BJ", "LJ")
FULL_DECK = [r + s for s in SUITS for r in RANKS] + list(JOKERS)


# --- cards -------------------------------------------------------------------


class Deal:
    """What the bot knows about the current deal, from one observation."""

    def __init__(self, state: dict) -> None:
        self.state = state
        self.trump: str | None = state["trump"]
        self.h: int = state["h"]
        self.seat: int = state["seat"]
        self.hand: list[str] = state["hand"]
        played = [c for t in state["past_tricks"] for c in t["cards"]]
        trick = state["trick"] or {"leader": self.seat, "cards": []}
        self.trick_leader: int = trick["leader"]
        self.trick_cards: list[str] = trick["cards"]
        played += self.trick_cards
        out_of_play = {state["turn_up"]}
        if state["joker_discard"]:
            out_of_play.add(state["joker_discard"]["card"])
        if self.trump is None:
            out_of_play.update(JOKERS)  # a no-trump deal has no Bloopers in play
        #: cards that may still be in another player's hand (or the stock)
        self.unseen = set(FULL_DECK) - set(self.hand) - set(played) - out_of_play
        self.voids = self._voids(state["past_tricks"])

    def is_trump(self, card: str) -> bool:
        return self.trump is not None and (card in JOKERS or card[1] == self.trump)

    def suit(self, card: str) -> str:
        """The suit a card follows (jokers belong to the trump suit, BA-3.3)."""
        return self.trump if card in JOKERS and self.trump else card[1]

    def power(self, card: str, led: str | None = None) -> int:
        """Higher wins; -1 for a card that neither follows ``led`` nor is a trump."""
        if self.is_trump(card):
            return 100 + (14 if card == "BJ" else 13 if card == "LJ" else RANKS.index(card[0]))
        if led is None or card[1] == led:
            return RANKS.index(card[0])
        return -1

    def higher_unseen(self, card: str) -> int:
        """How many unseen cards of the card's suit would beat it."""
        s, p = self.suit(card), self.power(card)
        return sum(1 for c in self.unseen if self.suit(c) == s and self.power(c) > p)

    def _voids(self, past_tricks: list[dict]) -> dict[int, set[str]]:
        """Suits each seat has shown out of (it did not follow the suit led)."""
        voids: dict[int, set[str]] = {s: set() for s in range(4)}
        for t in past_tricks:
            led = self.suit(t["cards"][0])
            for i, c in enumerate(t["cards"][1:], start=1):
                if self.suit(c) != led:
                    voids[(t["leader"] + i) % 4].add(led)
        return voids

    def trumps_out(self) -> bool:
        return any(self.is_trump(c) for c in self.unseen)

    def may_ruff(self, seat: int, suit: str) -> bool:
        """Could this seat trump a trick led in ``suit``?"""
        return suit != self.trump and suit in self.voids[seat] and self.trumps_out()


# --- bidding -----------------------------------------------------------------


def estimate_tricks(d: Deal) -> float:
    """The tricks this hand should take, summed card by card."""
    h = d.h
    # Chance that a given unseen card sits in one of the three other hands
    # (the rest of the unseen cards are in the stock).
    q = min(1.0, 3 * h / max(1, len(d.unseen)))
    tricks = 0.0
    my_trumps = sorted((c for c in d.hand if d.is_trump(c)), key=d.power, reverse=True)
    for i, card in enumerate(my_trumps):
        expected_higher = d.higher_unseen(card) * q
        lower = len(my_trumps) - i - 1  # my smaller trumps: time for the higher ones to fall
        tricks += 1.0 / (1.0 + max(0.0, expected_higher - 0.8 * lower))
    for suit in SUITS:
        if suit == d.trump:
            continue
        cards = sorted((c for c in d.hand if c[1] == suit and not d.is_trump(c)), key=d.power, reverse=True)
        n = len(cards)
        for i, card in enumerate(cards[:2]):
            higher = d.higher_unseen(card)
            if higher == 0:
                p = 0.9
            elif higher == 1 and n >= 2 and i == 0:
                p = 0.45
            else:
                p = 0.0
            if d.trump is not None:
                # a long suit is short elsewhere and more likely to be ruffed
                p *= max(0.3, 1.0 - 0.06 * max(0, n - 3) - 0.1 * i)
            if h <= 4:
                p *= 0.7  # short deals: the suit may never be led when this card could win
            tricks += p
    if d.trump is not None and h >= 4:
        # Spare trumps with a short side suit can ruff once the suit is led.
        winners = sum(1 for c in my_trumps if d.higher_unseen(c) * q < 1)
        spare = len(my_trumps) - winners
        shortness = sum(max(0, 2 - sum(1 for c in d.hand if c[1] == s and not d.is_trump(c)))
                        for s in SUITS if s != d.trump)
        tricks += 0.5 * min(spare, shortness)
    return tricks


def is_sure_board(d: Deal) -> bool:
    """The hand is exactly the top ``h`` trumps still in play: every trick is ours."""
    if d.trump is None:
        return False
    in_play = [c for c in d.unseen | set(d.hand) if d.is_trump(c)]
    top = sorted(in_play, key=d.power, reverse=True)[: d.h]
    return len(top) == d.h and set(top) == set(d.hand)


def single_card_wins(d: Deal) -> float:
    """With one card each (``h = 1``): the chance that our card, led, takes the trick —
    that none of the other three hands holds a card that beats it."""
    (card,) = d.hand
    beaters = sum(1 for c in d.unseen
                  if (d.is_trump(c) and not d.is_trump(card)) or d.power(c, d.suit(card)) > d.power(card))
    return (1 - beaters / max(1, len(d.unseen))) ** 3


def bid(d: Deal, legal: list[str]) -> str:
    state = d.state
    partner = (d.seat + 2) % 4
    if state["board_levels"][partner]:
        return "pass"  # partner's board decides our contract; a number would be ignored
    if is_sure_board(d) and "board" in legal:
        return "board"
    if d.h == 1:
        # Only pass or board: +10 or -10, so board pays when the card wins more often
        # than not (and a hand of passes from everyone only deals again).
        return "board" if single_card_wins(d) > 0.5 else "pass"
    estimate = estimate_tricks(d)
    # A bid of n pays 5n if made and costs 5n if not: bid what the hand takes, and
    # 1 as soon as one trick is more likely than not.
    n = max(int(estimate), 1 if estimate >= 0.7 else 0)
    n = min(n, d.h - 1)
    return str(n) if n >= 1 and str(n) in legal else "pass"


# --- play --------------------------------------------------------------------


def cheapest(d: Deal, cards: list[str], led: str | None = None) -> str:
    return min(cards, key=lambda c: (d.power(c, led) if d.power(c, led) >= 0 else d.power(c), c))


def throw_away(d: Deal, cards: list[str]) -> str:
    """The card we miss least: a low side card from a short suit (to make a void), never
    a trump if we can help it."""
    def cost(c: str) -> tuple:
        if d.is_trump(c):
            return (1, d.power(c))
        length = sum(1 for x in d.hand if x[1] == c[1] and not d.is_trump(x))
        # keep a guard under a king; prefer discarding from short suits
        return (0, RANKS.index(c[0]) * 2 + length)
    return min(cards, key=cost)


def is_top(d: Deal, card: str) -> bool:
    return d.higher_unseen(card) == 0


def lead(d: Deal, legal: list[str]) -> str:
    trumps = [c for c in legal if d.is_trump(c)]
    opponents = [(d.seat + 1) % 4, (d.seat + 3) % 4]
    # The Little Blooper led makes every trump holder play its lowest trump: it wins
    # unless the Big Blooper is someone's only trump.
    if "LJ" in legal and ("BJ" not in d.unseen or len(d.hand) <= 2):
        return "LJ"
    # The Big Blooper led wins and pulls each opponent's highest trump.
    if "BJ" in legal and d.trumps_out():
        return "BJ"
    # Draw trumps with sure winners while opponents may still hold some.
    top_trumps = [c for c in trumps if is_top(d, c)]
    if top_trumps and d.trumps_out() and len(trumps) >= 2:
        return max(top_trumps, key=d.power)
    # Cash a side-suit winner that no opponent can ruff.
    side_tops = [c for c in legal if not d.is_trump(c) and is_top(d, c)
                 and not any(d.may_ruff(o, c[1]) for o in opponents)]
    if side_tops:
        return max(side_tops, key=d.power)
    if top_trumps:
        return max(top_trumps, key=d.power)
    side = [c for c in legal if not d.is_trump(c)]
    if not side:
        return cheapest(d, legal)
    # With spare trumps, lead a singleton to ruff that suit later.
    if trumps:
        singles = [c for c in side if sum(1 for x in d.hand if x[1] == c[1] and not d.is_trump(x)) == 1
                   and RANKS.index(c[0]) < 10]
        if singles:
            return cheapest(d, singles)
    # Otherwise lead low from the longest side suit: partner may win it, and an
    # unprotected king or queen is not thrown under an ace.
    def length(c: str) -> int:
        return sum(1 for x in d.hand if x[1] == c[1] and not d.is_trump(x))
    longest = max(length(c) for c in side)
    return cheapest(d, [c for c in side if length(c) == longest])


def follow(d: Deal, legal: list[str]) -> str:
    cards = d.trick_cards
    led = d.suit(cards[0])
    powers = [d.power(c, led) for c in cards]
    best = max(range(len(cards)), key=powers.__getitem__)
    winner_seat = (d.trick_leader + best) % 4
    best_power = powers[best]
    partner = (d.seat + 2) % 4
    still_to_play = [(d.seat + k) % 4 for k in range(1, 4 - len(cards))]

    def holds(card: str) -> bool:
        """Would this card, winning now, stay the winner after the players still to come?"""
        if not still_to_play:
            return True
        opponents_after = [s for s in still_to_play if s != partner]
        if not opponents_after:
            return True
        p = d.power(card, led)
        if d.is_trump(card):
            return not any(d.is_trump(c) and d.power(c) > p for c in d.unseen)
        return is_top(d, card) and not any(d.may_ruff(o, led) for o in opponents_after)

    if winner_seat == partner and holds(cards[best]):
        return throw_away(d, legal)
    winners = [c for c in legal if d.power(c, led) > best_power]
    if not winners:
        return throw_away(d, legal)
    safe = [c for c in winners if holds(c)]
    if safe:
        return cheapest(d, safe, led)
    if not still_to_play or len(still_to_play) == 1 and winner_seat != partner:
        # Last but one or last: take the trick as cheaply as possible and hope.
        return cheapest(d, winners, led)
    if d.is_trump(cheapest(d, winners, led)) and led != d.trump:
        return cheapest(d, winners, led)  # a ruff usually holds
    return throw_away(d, legal)  # second hand low: keep the high card for later


def decide(request: Request) -> str:
    legal = request.legal
    if len(legal) == 1:
        return legal[0]
    d = Deal(request.state)
    if request.decision == "bid":
        return bid(d, legal)
    if not d.trick_cards:
        return lead(d, legal)
    return follow(d, legal)


if __name__ == "__main__":
    sys.exit(run(decide, name="heuristic-back-alley"))
