"""Schmier: the rules engine (RULES.md §2 with the §0 conventions).

Six seats, three teams (``seat mod 3``), one 53-card deck (52 + ``JK``).  A
game is a run of deals; each deal goes through these decisions:

``bid``             each seat once, from the dealer's left to the dealer:
                    ``"pass"`` or ``"3"`` … ``"6"``, strictly above every earlier
                    bid; bidding stops at once on a 6 (SC-3).  All pass: the
                    same dealer deals again (SC-3.1, guard RULES 0.7).
``trump``           the declarer names ``"C" "D" "H" "S"`` (SC-4).
``discard``         each non-dealer, from the dealer's left, discards 0 to 3
                    non-trumps face down one card at a time, or ``"done"``;
                    after ``"done"`` or the third card it draws as many (SC-5.1).
``dealer_discard``  the dealer, holding the rest of the stock, discards one
                    card at a time back to 6 cards, keeping SC-5.2 satisfiable.
``play``            six tricks, the declarer leads the first (SC-6).

Cards are their text (``"TS"``, ``"JK"``) inside the engine too, so an
action needs no conversion.  Everything trump-dependent comes from small
tables indexed by the trump suit, so the per-decision work is a few look-ups.

The hot path (a random game is ~115 deals and ~6,900 decisions, see
``benchmarks/engine_schmier.py``) is kept to a few list operations:

* ``apply`` mutates in place and leaves the legal list of the next decision
  in ``_legal``, often a list the state already holds (the hand, the cards of
  the led suit, the bid list); ``legal_actions`` returns a copy and ``apply``
  checks membership in it.  Nothing outside ``apply`` mutates ``_legal``.
* During the play each seat's hand is also kept split by the suit a card
  follows (``_by_suit``), so a follower's legal list needs no filtering.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from ..base import (
    Event,
    GameSpec,
    GameState,
    IllegalAction,
    Outcome,
    View,
    merge_options,
    positive_int,
    team_of_seat,
)
from ..cards import RANKS, SUITS, randbelow, shuffle
from .notation import CARD_INDEX, CARDS, JOKER, Action

NUM_SEATS = 6
NUM_TEAMS = 3
HAND_SIZE = 6
DECK_SIZE = 53
STOCK_SIZE = DECK_SIZE - NUM_SEATS * HAND_SIZE  # 17
MAX_DISCARDS = 3
MIN_BID, MAX_BID = 3, 6
TARGET = 21
DEFAULT_OPTIONS: dict[str, int] = {"max_redeals": 10, "max_deals": 200}

#: The six points of a deal, in this order everywhere (SC-7.1 … SC-7.6).
POINT_NAMES = ("high", "low", "right", "left", "joker", "game")

BID, TRUMP, DISCARD, DEALER_DISCARD, PLAY, OVER = range(6)
PHASE_NAMES = ("bid", "trump", "discard", "dealer_discard", "play", "over")

# --- tables ---------------------------------------------------------------
# Cards stay text (``"TS"``, ``"JK"``) inside the engine too: every table is a
# dict keyed by card text, so actions need no conversion on the hot path.
# Suits are indices 0..3 into ``SUITS`` ("CDHS").

#: Sort key of a hand: suits C D H S, ranks 2 … A within a suit, JK last.
ORDER: dict[str, int] = CARD_INDEX

#: Card-point value for the Game point (SC-7.6): A 4, K 3, Q 2, J 1, T 10, JK 1.
GAME_VALUE: dict[str, int] = {c: {"A": 4, "K": 3, "Q": 2, "J": 1, "T": 10}.get(c[0], 0) for c in CARDS}
GAME_VALUE[JOKER] = 1


def _left_suit(t: int) -> int:
    """The other suit of the same colour: C<->S (0<->3), D<->H (1<->2)."""
    return 3 - t


#: Per trump suit index: the Ace, the 2, the Right Bauer, the Left Bauer.
ACE = ["A" + s for s in SUITS]
TWO = ["2" + s for s in SUITS]
RIGHT = ["J" + s for s in SUITS]
LEFT = ["J" + SUITS[_left_suit(t)] for t in range(4)]
#: Trumps the dealer may never discard (SC-5.2).
PROTECTED = [frozenset((ACE[t], TWO[t], RIGHT[t], LEFT[t], JOKER)) for t in range(4)]
#: Points decided by who plays a card (SC-7.1 High, SC-7.2 Low) ...
ON_PLAY = [{ACE[t]: 0, TWO[t]: 1} for t in range(4)]
#: ... and by who wins the trick holding it (SC-7.3, 7.4, 7.5).
ON_WIN = [{RIGHT[t]: 2, LEFT[t]: 3, JOKER: 4} for t in range(4)]
#: Both, for the play: point index per card, 0 1 decided at once, 2 3 4 at the trick's end.
SPECIAL = [{**ON_PLAY[t], **ON_WIN[t]} for t in range(4)]

#: EFFECTIVE[t][card]: the suit the card belongs to when t is trump (SC-4.1).
EFFECTIVE: list[dict[str, int]] = [
    {c: t if c == JOKER or c == LEFT[t] else SUITS.index(c[1]) for c in CARDS} for t in range(4)
]


def _trump_rank(t: int, c: str) -> int:
    """SC-4.2: A 14, K 13, Q 12, Right 11, Left 10, T 9 … 2 1, JK 0."""
    if c == JOKER:
        return 0
    if c == RIGHT[t]:
        return 11
    if c == LEFT[t]:
        return 10
    r = RANKS.index(c[0])
    return r + 1 if r < 9 else r + 2  # 2..T -> 1..9; Q K A -> 12 13 14


#: STRENGTH[t][led][card]: higher wins the trick (SC-6.2, SC-4.3); 0 for a
#: card that neither follows the led suit nor is a trump.
STRENGTH: list[list[dict[str, int]]] = [
    [
        {
            c: 100 + _trump_rank(t, c)
            if EFFECTIVE[t][c] == t
            else (1 + RANKS.index(c[0]) if EFFECTIVE[t][c] == led else 0)
            for c in CARDS
        }
        for led in range(4)
    ]
    for t in range(4)
]

#: NON_TRUMPS[t]: the cards that are not trumps when t is trump.
NON_TRUMPS = [frozenset(c for c in CARDS if EFFECTIVE[t][c] != t) for t in range(4)]
#: DEALER_MAY[t][need_other > 0][need_trump > 0]: what the dealer may still
#: discard (SC-5.2) given which kinds of discard are still due.
DEALER_MAY: list[list[list[frozenset[str]]]] = [
    [
        [frozenset(), frozenset(c for c in CARDS if EFFECTIVE[t][c] == t and c not in PROTECTED[t])],
        [NON_TRUMPS[t], frozenset(c for c in CARDS if c not in PROTECTED[t])],
    ]
    for t in range(4)
]

#: Legal bids once the highest bid so far is ``h`` (0 = none yet).
BID_LEGAL = [["pass"] + [str(b) for b in range(max(MIN_BID, h + 1), MAX_BID + 1)] for h in range(7)]
SUIT_LEGAL = list(SUITS)
NEXT = [(s + 1) % NUM_SEATS for s in range(NUM_SEATS)]
#: TEAM[s]: the team of seat s (RULES 0.2).
TEAM = [team_of_seat(s, NUM_TEAMS) for s in range(NUM_SEATS)]
#: DEAL_FROM[dealer][s]: seat s gets deck[DEAL_FROM[dealer][s]::6] (RULES 0.5).
DEAL_FROM = [[(s - d - 1) % NUM_SEATS for s in range(NUM_SEATS)] for d in range(NUM_SEATS)]
#: NEXT_BY[leader][i]: the seat that played card ``i`` of a trick.
NEXT_BY = [[(s + i) % NUM_SEATS for i in range(NUM_SEATS)] for s in range(NUM_SEATS)]
BID_VALUE = {"pass": 0, **{str(b): b for b in range(MIN_BID, MAX_BID + 1)}}
SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}
NO_ACTIONS: list[str] = []  # the legal list once the game is over (never mutated)


def trick_winner(cards: Sequence[str], trump: int) -> int:
    """Index (0 = the lead) of the card that wins a trick (SC-6.2)."""
    strength = STRENGTH[trump][EFFECTIVE[trump][cards[0]]]
    best, best_i = -1, 0
    for i, c in enumerate(cards):
        s = strength[c]
        if s > best:
            best, best_i = s, i
    return best_i


# --- options and spec -----------------------------------------------------


def normalize_options(options: Mapping[str, Any] | None) -> dict[str, int]:
    out = merge_options("schmier", options, DEFAULT_OPTIONS)
    for key in DEFAULT_OPTIONS:
        positive_int(f"schmier option {key!r}", out[key])
    return out


class SchmierSpec(GameSpec):
    name = "schmier"
    title = "Schmier"
    rules_version = "2"  # 2: unified events (the final event is game_over)
    action_type = Action

    def normalize_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return normalize_options(options)

    def num_seats(self, options: Mapping[str, Any]) -> int:
        return NUM_SEATS

    def num_teams(self, options: Mapping[str, Any]) -> int:
        return NUM_TEAMS

    def new_game(
        self, seed: int, options: Mapping[str, Any] | None = None
    ) -> tuple[SchmierState, list[Event]]:
        return SchmierState.new(seed, options)

    def determinize(self, view: View, rng: random.Random) -> SchmierState:
        from .determinize import determinize  # the sampler builds on this module

        return determinize(view, rng)


# --- state ----------------------------------------------------------------


class SchmierState(GameState):
    """A running Schmier game.  Build one with ``new`` or ``from_deal``.

    Public attributes (read them, do not write them): ``scores`` (per team),
    ``dealer``, ``deal`` (number of the current deal, all-pass deals
    included), ``played`` (deals whose bidding produced a declarer),
    ``redeals`` (consecutive all-pass deals so far), ``hands`` (per seat,
    sorted card text), ``bids`` (``(seat, bid)`` pairs, 0 for pass), ``high``
    and ``declarer`` (-1 while nobody has bid), ``trump`` (suit index into
    ``"CDHS"``, -1 before it is named), ``discards`` (per seat, face down),
    ``discard_counts``/``draw_counts`` (per seat, ``None`` until known),
    ``leader``/``trick`` (the trick being played), ``tricks`` (``(leader,
    cards, winner)``), ``tricks_won``/``counts`` (per team), ``points`` (team
    or ``None`` per point, in ``POINT_NAMES`` order).
    """

    num_seats = NUM_SEATS
    num_teams = NUM_TEAMS

    __slots__ = (
        "options", "_max_redeals", "_max_deals", "_rng",
        "scores", "dealer", "deal", "played", "redeals",
        "phase", "actor", "hands", "stock",
        "bids", "high", "declarer", "trump", "_eff", "_special", "_pending", "_led",
        "discards", "discard_counts", "draw_counts", "_turn_discards",
        "_need_trump", "_need_other",
        "leader", "trick", "tricks", "tricks_won", "points", "counts", "_by_suit",
        "_legal", "_outcome",
    )

    # -- construction --------------------------------------------------

    def __init__(self, options: Mapping[str, Any] | None, rng: random.Random) -> None:
        self.options = normalize_options(options)
        self._max_redeals = self.options["max_redeals"]
        self._max_deals = self.options["max_deals"]
        self._rng = rng
        self.scores = [0, 0, 0]
        self.dealer = 0
        self.deal = 0
        self.played = 0
        self.redeals = 0
        self.actor: int | None = None
        self._outcome: Outcome | None = None
        self._legal: list[str] = NO_ACTIONS

    @classmethod
    def new(cls, seed: int, options: Mapping[str, Any] | None = None) -> tuple[SchmierState, list[Event]]:
        """A new game: the first dealer is uniform over the seats (RULES 0.4)."""
        rng = random.Random(seed)
        state = cls(options, rng)
        state.dealer = randbelow(rng, NUM_SEATS)
        events: list[Event] = []
        state._shuffle_and_deal(events)
        return state, events

    @classmethod
    def from_deal(
        cls,
        dealer: int,
        hands: Sequence[Sequence[str]],
        stock: Sequence[str],
        *,
        scores: Sequence[int] = (0, 0, 0),
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        deal: int = 1,
        played: int = 0,
        redeals: int = 0,
    ) -> tuple[SchmierState, list[Event]]:
        """A constructed position at the start of bidding (for tests and tools).

        ``hands[s]`` are seat ``s``'s six cards, ``stock`` the 17 others, top
        card first; ``deal`` numbers this deal, ``played`` and ``redeals`` are
        the guard counters so far (RULES 0.7).  Later deals are shuffled by
        ``random.Random(seed)``.
        """
        if not 0 <= dealer < NUM_SEATS:
            raise ValueError(f"dealer must be a seat 0..5, got {dealer}")
        if len(hands) != NUM_SEATS or any(len(h) != HAND_SIZE for h in hands):
            raise ValueError("from_deal needs six hands of six cards")
        if len(stock) != STOCK_SIZE:
            raise ValueError(f"from_deal needs a stock of {STOCK_SIZE} cards, got {len(stock)}")
        cards = [c for h in hands for c in h] + list(stock)
        unknown = [c for c in cards if c not in CARD_INDEX]
        if unknown or len(set(cards)) != DECK_SIZE:
            raise ValueError(f"hands + stock must be the 53 distinct cards (bad: {unknown})")
        state = cls(options, random.Random(seed))
        state.scores = [int(x) for x in scores]
        state.dealer = dealer
        state.deal = deal - 1
        state.played = played
        state.redeals = redeals
        events: list[Event] = []
        state._start_deal(
            [sorted(h, key=ORDER.__getitem__) for h in hands],
            list(reversed(stock)),
            events,
        )
        return state, events

    @classmethod
    def from_play(
        cls,
        dealer: int,
        hands: Sequence[Sequence[str]],
        trump: str,
        declarer: int,
        bid: int,
        *,
        scores: Sequence[int] = (0, 0, 0),
        options: Mapping[str, Any] | None = None,
        seed: int = 0,
        deal: int = 1,
        played: int = 1,
    ) -> tuple[SchmierState, list[Event]]:
        """A constructed position at the first lead of a deal (for tests and tools).

        ``hands[s]`` are the six cards seat ``s`` plays; the 17 other cards
        count as the dealer's face-down discards, as if every other seat had
        said ``"done"``.  It does not check that an exchange could have
        produced these hands (SC-5); ``from_deal`` plays the real exchange.
        The events are those of a deal whose bidding and exchange were skipped.
        """
        if not 0 <= declarer < NUM_SEATS or not MIN_BID <= bid <= MAX_BID or trump not in SUITS:
            raise ValueError("from_play needs a declarer seat, a bid 3..6 and a trump suit")
        if len(hands) != NUM_SEATS or any(len(h) != HAND_SIZE for h in hands):
            raise ValueError("from_play needs six hands of six cards")
        cards = [c for h in hands for c in h]
        if any(c not in CARD_INDEX for c in cards) or len(set(cards)) != len(cards):
            raise ValueError("from_play hands must be distinct Schmier cards")
        rest = [c for c in CARDS if c not in set(cards)]
        state, events = cls.from_deal(
            dealer,
            hands,
            rest,
            scores=scores,
            options=options,
            seed=seed,
            deal=deal,
            played=played - 1,
        )
        state.bids = [(declarer, bid)]
        state.high = bid
        state.declarer = declarer
        state.played = played
        state.trump = t = SUITS.index(trump)
        state._eff = EFFECTIVE[t]
        state._special = SPECIAL[t]
        state.stock = []
        state.discards[dealer] = rest
        state.discard_counts = [0] * NUM_SEATS
        state.draw_counts = [0] * NUM_SEATS
        state.discard_counts[dealer] = state.draw_counts[dealer] = len(rest)
        state._start_play()
        events.append(Event({"type": "contract", "declarer": declarer, "bid": bid}))
        events.append(Event({"type": "trump", "seat": declarer, "trump": trump}))
        return state, events

    def _shuffle_and_deal(self, events: list[Event]) -> None:
        deck = list(CARDS)
        shuffle(deck, self._rng)
        # RULES 0.5: one card at a time from the dealer's left, clockwise, so
        # the seat ``k`` places left of the dealer gets deck[k-1], deck[k+5], ...
        key = ORDER.__getitem__
        hands = [sorted(deck[k : NUM_SEATS * HAND_SIZE : NUM_SEATS], key=key) for k in DEAL_FROM[self.dealer]]
        # The stock is kept top card LAST so that drawing is list.pop().
        stock = deck[NUM_SEATS * HAND_SIZE :]
        stock.reverse()
        self._start_deal(hands, stock, events)

    def _start_deal(self, hands: list[list[str]], stock: list[str], events: list[Event]) -> None:
        self.deal += 1
        self.hands = hands
        self.stock = stock
        self.phase = BID
        self.actor = NEXT[self.dealer]
        self._legal = BID_LEGAL[0]
        self.bids: list[tuple[int, int]] = []
        self.high = 0
        self.declarer = -1
        self.trump = -1
        self._eff: dict[str, int] = {}
        self._special: dict[str, int] = {}
        self._pending: list[int] = []  # points (SC-7.3-5) that go to this trick's winner
        self._led = -1
        self.discards: list[list[str]] = [[], [], [], [], [], []]
        self.discard_counts: list[int | None] = [None] * NUM_SEATS
        self.draw_counts: list[int | None] = [None] * NUM_SEATS
        self._turn_discards = 0
        self._need_trump = 0
        self._need_other = 0
        self.leader = -1
        self.trick: list[str] = []
        self.tricks: list[tuple[int, tuple[str, ...], int]] = []
        self.tricks_won = [0, 0, 0]
        self.points: list[int | None] = [None] * 6
        self.counts = [0, 0, 0]
        self._by_suit: list[list[list[str]]] = []
        events.append(Event({"type": "deal", "deal": self.deal, "dealer": self.dealer, "scores": self.scores[:]}))
        events.extend(Event({"type": "hand", "seat": s, "cards": hands[s][:]}, (s,)) for s in range(NUM_SEATS))

    def clone(self) -> SchmierState:
        new = object.__new__(SchmierState)
        for name in self.__slots__:
            setattr(new, name, getattr(self, name))
        new.options = dict(self.options)
        new._rng = random.Random()
        new._rng.setstate(self._rng.getstate())
        new.scores = self.scores[:]
        new.hands = [h[:] for h in self.hands]
        new.stock = self.stock[:]
        new.bids = self.bids[:]
        new.discards = [d[:] for d in self.discards]
        new.discard_counts = self.discard_counts[:]
        new.draw_counts = self.draw_counts[:]
        new.trick = self.trick[:]
        new.tricks = self.tricks[:]
        new.tricks_won = self.tricks_won[:]
        new.points = self.points[:]
        new.counts = self.counts[:]
        new._pending = self._pending[:]
        new._by_suit = [[cards[:] for cards in suits] for suits in self._by_suit]
        # The legal list may be one of the lists copied above: derive it anew.
        new._legal = new._compute_legal()
        return new

    # -- queries -------------------------------------------------------

    def to_act(self) -> int | None:
        return self.actor  # None once the game is over

    def decision(self) -> str:
        return PHASE_NAMES[self.phase]

    def outcome(self) -> Outcome | None:
        return self._outcome

    def legal_actions(self) -> list[str]:
        return self._legal[:]

    def _compute_legal(self) -> list[str]:
        """The legal list of the pending decision, derived from the state.

        ``apply`` keeps ``_legal`` up to date by cheaper means; this is the
        definition they must agree with (and what ``clone`` uses).
        """
        phase = self.phase
        actor = self.actor
        if phase == PLAY:
            assert actor is not None
            if self.trick:
                return self._by_suit[actor][self._led] or self.hands[actor]  # SC-6.1
            return self.hands[actor]
        if phase == BID:
            return BID_LEGAL[self.high]
        if phase == DISCARD:
            assert actor is not None
            return self._discard_legal(actor)
        if phase == DEALER_DISCARD:
            assert actor is not None
            # SC-5.2: what is left to discard keeps the rule satisfiable.
            may = DEALER_MAY[self.trump][self._need_other > 0][self._need_trump > 0]
            return list(filter(may.__contains__, self.hands[actor]))
        if phase == TRUMP:
            return SUIT_LEGAL
        return NO_ACTIONS

    def _discard_legal(self, seat: int) -> list[str]:
        # SC-5.1: non-trumps only; the turn ends by itself at 3 discards.
        legal = list(filter(NON_TRUMPS[self.trump].__contains__, self.hands[seat]))
        legal.append("done")
        return legal

    # -- apply ---------------------------------------------------------

    def apply(self, action: str) -> list[Event]:
        if action not in self._legal:
            self._reject(action)
        if self.phase == PLAY:
            # The common case inline: a card that does not end the trick.
            seat: int = self.actor  # type: ignore[assignment]
            suit = self._eff[action]
            self.hands[seat].remove(action)
            by_suit = self._by_suit
            by_suit[seat][suit].remove(action)
            trick = self.trick
            trick.append(action)
            event = Event({"type": "play", "seat": seat, "card": action})
            if action in self._special:
                point = self._special[action]
                if point < 2:
                    self.points[point] = TEAM[seat]  # SC-7.1 High, SC-7.2 Low
                else:
                    self._pending.append(point)  # SC-7.3-5: to the trick's winner
            n = len(trick)
            if n == NUM_SEATS:
                return self._end_trick([event])
            if n == 1:
                self._led = suit
            else:
                suit = self._led
            self.actor = seat = NEXT[seat]
            self._legal = by_suit[seat][suit] or self.hands[seat]  # SC-6.1
            return [event]
        phase = self.phase
        if phase == DISCARD:
            seat = self.actor  # type: ignore[assignment]
            if action == "done":
                return self._draw(seat, [])
            self.hands[seat].remove(action)
            self.discards[seat].append(action)
            self._turn_discards += 1
            event = Event({"type": "discard", "seat": seat, "card": action}, (seat,))
            if self._turn_discards < MAX_DISCARDS:
                self._legal.remove(action)  # our own list (built by _discard_legal): the rest stays legal
                return [event]
            return self._draw(seat, [event])
        if phase == DEALER_DISCARD:
            seat = self.actor  # type: ignore[assignment]
            hand = self.hands[seat]
            hand.remove(action)
            self.discards[seat].append(action)
            if self._eff[action] == self.trump:
                self._need_trump -= 1
                quota_left = self._need_trump
            else:
                self._need_other -= 1
                quota_left = self._need_other
            if len(hand) == HAND_SIZE:
                self.discard_counts[seat] = len(self.discards[seat])
                self._start_play()
            elif quota_left:  # same kind still due: the rest of our own list stays legal
                self._legal.remove(action)
            else:
                self._legal = self._compute_legal()
            return [Event({"type": "discard", "seat": seat, "card": action}, (seat,))]
        if phase == BID:
            return self._bid(action)
        return self._name_trump(action)

    def _reject(self, action: object) -> NoReturn:
        Action.from_text(action)  # raises InvalidAction for text that is no action
        if self.phase == OVER:
            raise IllegalAction(f"the game is over; {action!r} is not legal")
        raise IllegalAction(
            f"{action!r} is not legal for seat {self.actor}'s {PHASE_NAMES[self.phase]} decision"
            f" (legal: {', '.join(self._legal)})"
        )

    def _bid(self, action: str) -> list[Event]:
        seat: int = self.actor  # type: ignore[assignment]
        value = BID_VALUE[action]
        self.bids.append((seat, value))
        events = [Event({"type": "bid", "seat": seat, "bid": action})]
        if value:
            self.high = value
            self.declarer = seat
        if value == MAX_BID or len(self.bids) == NUM_SEATS:  # SC-3
            self._end_bidding(events)
        else:
            self.actor = NEXT[seat]
            self._legal = BID_LEGAL[self.high]
        return events

    def _end_bidding(self, events: list[Event]) -> None:
        if self.declarer < 0:
            # SC-3.1: the same dealer deals again; RULES 0.7 guard.
            self.redeals += 1
            events.append(
                Event({"type": "redeal", "deal": self.deal, "dealer": self.dealer, "redeals": self.redeals})
            )
            if self.redeals >= self._max_redeals:
                self._finish(
                    Outcome("aborted", (), tuple(self.scores), "max_redeals", {"redeals": self.redeals}),
                    events,
                )
            else:
                self._shuffle_and_deal(events)
            return
        self.redeals = 0
        self.played += 1
        events.append(Event({"type": "contract", "declarer": self.declarer, "bid": self.high}))
        self.phase = TRUMP
        self.actor = self.declarer
        self._legal = SUIT_LEGAL

    def _name_trump(self, action: str) -> list[Event]:
        self.trump = t = SUIT_INDEX[action]
        self._eff = EFFECTIVE[t]
        self._special = SPECIAL[t]
        events = [Event({"type": "trump", "seat": self.actor, "trump": action})]
        self.phase = DISCARD
        self.actor = seat = NEXT[self.dealer]
        self._turn_discards = 0
        self._legal = self._discard_legal(seat)
        return events

    def _draw(self, seat: int, events: list[Event]) -> list[Event]:
        """End ``seat``'s discard turn (SC-5.1); after the last, the dealer's draw (SC-5.2)."""
        # SC-5.1: the dealer gives as many cards from the top of the stock.
        n = self._turn_discards
        self._turn_discards = 0
        self.discard_counts[seat] = self.draw_counts[seat] = n
        events.append(Event({"type": "draw", "seat": seat, "count": n}))
        stock = self.stock
        if n:
            drawn = stock[-1 : -n - 1 : -1]
            del stock[-n:]
            hand = self.hands[seat]
            hand.extend(drawn)
            hand.sort(key=ORDER.__getitem__)
            events.append(Event({"type": "drawn", "seat": seat, "cards": drawn}, (seat,)))
        nxt = NEXT[seat]
        if nxt != self.dealer:
            self.actor = nxt
            self._legal = self._discard_legal(nxt)
            return events
        # SC-5.2: the dealer takes the rest of the stock ...
        drawn = stock[::-1]
        stock.clear()
        hand = self.hands[nxt]
        hand.extend(drawn)
        hand.sort(key=ORDER.__getitem__)
        self.draw_counts[nxt] = len(drawn)
        events.append(Event({"type": "draw", "seat": nxt, "count": len(drawn)}))
        events.append(Event({"type": "drawn", "seat": nxt, "cards": drawn}, (nxt,)))
        # ... and must discard exactly max(0, T - 6) trumps, the rest non-trumps.
        non_trumps = list(filter(NON_TRUMPS[self.trump].__contains__, hand))
        self._need_trump = need_trump = max(0, len(hand) - len(non_trumps) - HAND_SIZE)
        self._need_other = len(hand) - HAND_SIZE - need_trump
        self.phase = DEALER_DISCARD
        self.actor = nxt
        self._legal = non_trumps if not need_trump else self._compute_legal()
        return events

    def _start_play(self) -> None:
        """SC-6: the declarer leads; split every hand by the suit its cards follow."""
        eff = self._eff
        by_suit = self._by_suit = []
        for hand in self.hands:
            suits: list[list[str]] = [[], [], [], []]
            for c in hand:
                suits[eff[c]].append(c)
            by_suit.append(suits)
        self.phase = PLAY
        self.leader = self.actor = self.declarer
        self._legal = self.hands[self.declarer]

    def _end_trick(self, events: list[Event]) -> list[Event]:
        trick = self.trick
        t = self.trump
        leader = self.leader
        # SC-6.2, as trick_winner(trick, t) with the led suit already known:
        # the led card has a strength > 0 and no other card has the same one.
        strength = list(map(STRENGTH[t][self._led].__getitem__, trick))
        winner = NEXT_BY[leader][strength.index(max(strength))]
        team = TEAM[winner]
        self.tricks_won[team] += 1
        self.counts[team] += sum(map(GAME_VALUE.__getitem__, trick))
        pending = self._pending
        if pending:
            for point in pending:
                self.points[point] = team  # SC-7.3 Right, 7.4 Left, 7.5 Joker
            pending.clear()
        tricks = self.tricks
        tricks.append((leader, tuple(trick), winner))
        n = len(tricks)
        events.append(Event({"type": "trick", "n": n, "leader": leader, "cards": trick, "winner": winner,
                             "team": team}))
        self.trick = []
        if n < HAND_SIZE:
            self.leader = self.actor = winner
            self._legal = self.hands[winner]
            return events
        self._score_deal(events)
        return events

    def _score_deal(self, events: list[Event]) -> None:
        counts = self.counts
        points = self.points
        top = max(counts)
        points[5] = counts.index(top) if counts.count(top) == 1 else None  # SC-7.6 (tie: nobody)
        won = [points.count(0), points.count(1), points.count(2)]
        dteam = TEAM[self.declarer]
        made = won[dteam] >= self.high
        delta = won[:]
        if not made:
            delta[dteam] = -self.high  # SC-8
        scores = self.scores
        scores[0] += delta[0]
        scores[1] += delta[1]
        scores[2] += delta[2]
        events.append(
            Event(
                {
                    "type": "deal_score",
                    "deal": self.deal,
                    "declarer": self.declarer,
                    "bid": self.high,
                    "trump": SUITS[self.trump],
                    "points": dict(zip(POINT_NAMES, points, strict=True)),
                    "counts": counts[:],
                    "won": won,
                    "made": made,
                    "delta": delta,
                    "scores": scores[:],
                }
            )
        )
        outcome = self._end_check(dteam)
        if outcome is not None:
            self._finish(outcome, events)
        else:
            self.dealer = NEXT[self.dealer]  # RULES 0.4
            self._shuffle_and_deal(events)

    def _end_check(self, dteam: int) -> Outcome | None:
        scores = self.scores
        top = max(scores)
        if top < TARGET and self.played < self._max_deals:
            return None
        tied = [tm for tm in range(NUM_TEAMS) if scores[tm] == top]
        final = tuple(scores)
        if top >= TARGET:  # SC-9
            if len(tied) == 1:
                return Outcome("win", (tied[0],), final, "target_reached")
            if dteam in tied:
                return Outcome("win", (dteam,), final, "target_reached", {"tied": tied, "tie_break": "declarer"})
            return Outcome("draw", (), final, "target_reached", {"tied": tied})
        if self.played >= self._max_deals:  # RULES 0.7
            if len(tied) == 1:
                return Outcome("win", (tied[0],), final, "max_deals")
            return Outcome("draw", (), final, "max_deals", {"tied": tied})
        return None

    def _finish(self, outcome: Outcome, events: list[Event]) -> None:
        self._outcome = outcome
        self.phase = OVER
        self.actor = None
        self._legal = NO_ACTIONS
        events.append(Event({"type": "game_over", **outcome.to_json()}))

    # -- observation ---------------------------------------------------

    def observe(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` may know (RULES 0.6), as JSON-able data."""
        t = self.trump
        known = self.declarer >= 0 and self.phase != BID
        return {
            "seat": seat,
            "team": TEAM[seat],
            "phase": PHASE_NAMES[self.phase],
            "to_act": self.to_act(),
            "deal": self.deal,
            "played_deals": self.played,
            "redeals": self.redeals,
            "dealer": self.dealer,
            "hand": self.hands[seat][:],
            "bids": [{"seat": s, "bid": "pass" if v == 0 else str(v)} for s, v in self.bids],
            "declarer": self.declarer if known else None,
            "bid": self.high if known else None,
            "trump": SUITS[t] if t >= 0 else None,
            "discard_counts": self.discard_counts[:],
            "draw_counts": self.draw_counts[:],
            "my_discards": self.discards[seat][:],
            "trick": {"leader": self.leader, "cards": self.trick[:]} if self.phase == PLAY else None,
            "tricks": [
                {"leader": lead, "cards": list(cards), "winner": w} for lead, cards, w in self.tricks
            ],
            "tricks_won": self.tricks_won[:],
            "points": dict(zip(POINT_NAMES, self.points, strict=True)),
            "counts": self.counts[:],
            "scores": self.scores[:],
            "target": TARGET,
        }


SPEC = SchmierSpec()
