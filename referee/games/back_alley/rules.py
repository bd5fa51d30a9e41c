"""Back Alley rules engine (RULES.md §0 and §1).

The state is mutable and kept in plain lists of card strings plus a few
per-deal lookup tables chosen once per deal (effective suit of each card,
trick-ranking key, the set of trumps), so one decision costs a list
comprehension and a handful of dict lookups.

Phases: bidding (decision ``"bid"``), then play (``"play"``), deal after deal
until the 25th counted deal is scored (BA-10) or ``max_redeals`` consecutive
all-pass deals abort the game (0.7).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from ..base import (
    JSON,
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
from ..cards import RANK_INDEX, SUITS, randbelow, shuffle
from .notation import CARD_SET, DECK, JOKERS, Action

NUM_SEATS = 4
NUM_TEAMS = 2
NUM_DEALS = 25
DEFAULT_OPTIONS: dict[str, JSON] = {"max_redeals": 10}

#: TEAM[s]: the team of seat s (RULES 0.2).
TEAM = tuple(team_of_seat(s, NUM_TEAMS) for s in range(NUM_SEATS))

BID, PLAY, OVER = 0, 1, 2
_PHASE_NAMES = ("bid", "play", "over")


def hand_size(deal: int) -> int:
    """BA-2: deal ``k`` (1 … 25) gives ``|k - 13| + 1`` cards to each player."""
    return abs(deal - 13) + 1


# --- per-trump lookup tables (index None = no-trump deal) --------------------

def _tables(trump: str | None):
    esuit: dict[str, str] = {}
    key: dict[str, int] = {}
    for card in DECK:
        if card in JOKERS:
            # BA-3.3: jokers are trumps.  In a no-trump deal no joker is ever
            # in a hand (BA-3.2), the entry only keeps lookups total.
            esuit[card] = trump if trump is not None else "*"
            key[card] = 114 if card == "BJ" else 113
        else:
            esuit[card] = card[1]
            key[card] = RANK_INDEX[card[0]] + (100 if card[1] == trump else 0)
    trumps = frozenset(c for c in DECK if esuit[c] == trump) if trump else None
    return esuit, key, trumps


_TABLES = {t: _tables(t) for t in (*SUITS, None)}

#: Display/hand order: jokers, then spades, hearts, clubs, diamonds; high to low.
_ORDER = {"BJ": 0, "LJ": 1}
for _i, _s in enumerate("SHCD"):
    for _r, _ri in RANK_INDEX.items():
        _ORDER[_r + _s] = 2 + 13 * _i + (12 - _ri)
_ORDER_KEY = _ORDER.__getitem__

#: BA-5: the bids open with ``h`` cards, in this order.
_BIDS = {h: ["pass", *(str(n) for n in range(1, h)), "board"] for h in range(1, 14)}
_BID_SETS = {h: frozenset(b) for h, b in _BIDS.items()}


def contract_text(contract: Mapping[str, int]) -> str:
    """``"5"`` for a numeric target, ``"board"``, ``"board×2"`` … for board levels."""
    level = contract.get("board", 0)
    if level:
        return "board" if level == 1 else f"board×{level}"
    return str(contract.get("target", 0))


def deal_score(target: int, board: int, tricks: int, h: int) -> int:
    """BA-9 for one team."""
    if board:  # BA-9.2
        return 10 * h * board if tricks == h else -10 * h * board
    if tricks >= target:  # BA-9.1 (target 0 scores the tricks: ruling)
        return 5 * target + (tricks - target)
    return -5 * target


class BackAlleyState(GameState):
    num_seats = NUM_SEATS
    num_teams = NUM_TEAMS

    __slots__ = (
        "_max_redeals", "_rng", "_deal", "_h", "_dealer", "_redeals", "_scores",
        "_phase", "_turn", "_hands", "_turn_up", "_trump", "_esuit", "_key",
        "_trumps", "_discard", "_bids", "_nums", "_boards", "_nbids", "_nboards",
        "_last_board", "_contracts", "_leader", "_trick", "_led", "_past",
        "_won", "_broken", "_legal", "_outcome",
    )

    # -- construction -----------------------------------------------------

    def __init__(self, options: Mapping[str, JSON], rng: random.Random, dealer: int,
                 deal: int = 1, scores: Sequence[int] = (0, 0), redeals: int = 0) -> None:
        self._max_redeals: int = options["max_redeals"]
        self._rng = rng
        self._deal = deal
        self._h = hand_size(deal)
        self._dealer = dealer
        self._redeals = redeals
        self._scores = list(scores)
        self._outcome: Outcome | None = None
        self._legal: list[str] | None = None

    @classmethod
    def from_deal(
        cls,
        *,
        dealer: int,
        hands: Sequence[Sequence[str]],
        stock: Sequence[str],
        deal: int = 1,
        scores: Sequence[int] = (0, 0),
        redeals: int = 0,
        seed: int = 0,
        options: Mapping[str, JSON] | None = None,
    ) -> tuple[BackAlleyState, list[Event]]:
        """A game whose current deal is given explicitly (tests, tools).

        ``hands[s]`` is seat ``s``'s dealt hand (``h`` cards for deal number
        ``deal``), ``stock`` the undealt cards from the top: ``stock[0]`` is the
        turn-up, ``stock[1]`` the card a joker holder draws (BA-3.2).  The
        stock may be partial.  Later deals are shuffled by ``Random(seed)``.
        """
        opts = SPEC.normalize_options(options or {})
        if not 1 <= deal <= NUM_DEALS:
            raise ValueError(f"deal must be 1 … {NUM_DEALS}")
        if not 0 <= dealer < NUM_SEATS:
            raise ValueError("dealer must be a seat 0 … 3")
        h = hand_size(deal)
        if len(hands) != NUM_SEATS or any(len(hd) != h for hd in hands):
            raise ValueError(f"deal {deal} needs four hands of {h} cards")
        cards = [c for hd in hands for c in hd] + list(stock)
        bad = [c for c in cards if c not in CARD_SET]
        if bad:
            raise ValueError(f"not Back Alley cards: {bad}")
        if len(set(cards)) != len(cards):
            raise ValueError("a card appears twice")
        if not stock:
            raise ValueError("the stock needs at least the turn-up card")
        state = cls(opts, random.Random(seed), dealer, deal, scores, redeals)
        events: list[Event] = []
        state._begin_deal([list(hd) for hd in hands], list(stock), events)
        return state, events

    def _new_deal(self, events: list[Event]) -> None:
        """Shuffle and deal one card at a time from the dealer's left (0.5)."""
        deck = list(DECK)
        shuffle(deck, self._rng)
        n = 4 * self._h
        d = self._dealer
        hands: list[list[str]] = [[], [], [], []]
        for j in range(4):
            hands[(d + 1 + j) & 3] = deck[j:n:4]
        self._begin_deal(hands, deck[n:], events)

    def _begin_deal(self, hands: list[list[str]], stock: list[str], events: list[Event]) -> None:
        h = self._h
        for hd in hands:
            hd.sort(key=_ORDER_KEY)
        turn_up = stock[0]
        trump = None if turn_up in JOKERS else turn_up[1]  # BA-3.1 / BA-3.2
        self._hands = hands
        self._turn_up = turn_up
        self._trump = trump
        self._esuit, self._key, self._trumps = _TABLES[trump]
        self._discard: tuple[int, str] | None = None
        self._bids: list[str | None] = [None, None, None, None]
        self._nums = [0, 0, 0, 0]
        self._boards = [0, 0, 0, 0]
        self._nbids = 0
        self._nboards = 0
        self._last_board = -1
        self._contracts: list[tuple[int, int]] | None = None
        self._leader = -1
        self._trick: list[str] = []
        self._led = ""
        self._past: list[tuple[int, tuple[str, ...], int]] = []
        self._won = [0, 0]
        self._broken = False
        self._phase = BID
        self._turn = (self._dealer + 1) & 3  # BA-5: left of the dealer bids first
        self._legal = None
        events.append(Event({
            "type": "deal", "deal": self._deal, "h": h, "dealer": self._dealer,
            "redeals": self._redeals, "turn_up": turn_up, "trump": trump,
        }))
        events.extend(Event({"type": "hand", "seat": s, "cards": hands[s][:]}, (s,)) for s in range(4))
        if trump is None:
            other = "LJ" if turn_up == "BJ" else "BJ"
            for s in range(4):
                if other in hands[s]:
                    if len(stock) < 2:
                        raise ValueError("the stock has no card to draw after the joker discard")
                    drawn = stock[1]
                    hands[s].remove(other)
                    hands[s].append(drawn)
                    hands[s].sort(key=_ORDER_KEY)
                    self._discard = (s, other)
                    events.append(Event({"type": "joker_discard", "seat": s, "card": other}))
                    events.append(Event({"type": "draw", "seat": s, "count": 1}))
                    events.append(Event({"type": "drawn", "seat": s, "cards": [drawn]}, (s,)))
                    break

    # -- queries ----------------------------------------------------------

    def to_act(self) -> int | None:
        return None if self._phase == OVER else self._turn

    def decision(self) -> str:
        return _PHASE_NAMES[self._phase]

    def outcome(self) -> Outcome | None:
        return self._outcome

    def legal_actions(self) -> list[str]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal[:]

    def _compute_legal(self) -> list[str]:
        phase = self._phase
        if phase == PLAY:
            seat = self._turn
            hand = self._hands[seat]
            trick = self._trick
            trumps = self._trumps
            if not trick:
                # BA-8.2: trump may be led once broken, by a board bidder, or
                # (ruling) by a player holding nothing but trumps.
                if trumps is None or self._broken or self._boards[seat]:
                    return hand[:]
                rest = [c for c in hand if c not in trumps]
                return rest if rest else hand[:]
            led = self._led
            if led == self._trump:
                held = [c for c in hand if c in trumps]
                if not held:
                    return hand[:]
                first = trick[0]
                if first == "BJ":  # BA-8.3
                    return [max(held, key=self._key.__getitem__)]
                if first == "LJ":
                    return [min(held, key=self._key.__getitem__)]
                return held
            esuit = self._esuit
            follow = [c for c in hand if esuit[c] == led]  # BA-8.1
            return follow if follow else hand[:]
        if phase == BID:
            return _BIDS[self._h][:]
        return []

    # -- transitions ------------------------------------------------------

    def apply(self, action: str) -> list[Event]:
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action not in legal:
            Action.from_text(action)  # raises InvalidAction for malformed text
            raise IllegalAction(
                f"{action!r} is not legal now ({_PHASE_NAMES[self._phase]}); legal: {' '.join(legal)}"
            )
        self._legal = None
        if self._phase == PLAY:
            return self._play(action)
        return self._bid(action)

    def _bid(self, action: str) -> list[Event]:
        seat = self._turn
        level = 0
        if action == "board":  # BA-5.3: levels in the order made
            self._nboards += 1
            level = self._boards[seat] = self._nboards
            self._last_board = seat
        elif action != "pass":
            self._nums[seat] = int(action)
        self._bids[seat] = action
        events = [Event({"type": "bid", "seat": seat, "bid": action, "level": level})]
        self._nbids += 1
        if self._nbids < 4:
            self._turn = (seat + 1) & 3
            return events
        if not self._nboards and not any(self._nums):
            self._all_pass(events)
            return events
        # BA-6 contracts.
        h = self._h
        b, n = self._boards, self._nums
        self._contracts = [
            (h, max(b[0], b[2])) if (b[0] or b[2]) else (n[0] + n[2], 0),
            (h, max(b[1], b[3])) if (b[1] or b[3]) else (n[1] + n[3], 0),
        ]
        # BA-7 first lead.
        if self._last_board >= 0:
            leader = self._last_board
        else:
            leader, best = -1, 0
            for i in range(1, 5):
                s = (self._dealer + i) & 3
                if n[s] > best:
                    leader, best = s, n[s]
        self._redeals = 0  # 0.7: a played deal resets the count
        self._phase = PLAY
        self._leader = self._turn = leader
        events.append(Event({
            "type": "contracts",
            "contracts": [{"target": t, "board": m} for t, m in self._contracts],
            "leader": leader,
        }))
        return events

    def _all_pass(self, events: list[Event]) -> None:
        # BA-5.4: the deal does not count; the next dealer redeals the same size.
        self._redeals += 1
        events.append(Event({
            "type": "redeal", "deal": self._deal, "dealer": self._dealer, "redeals": self._redeals,
        }))
        if self._redeals >= self._max_redeals:  # 0.7 guard
            self._finish(events, "aborted", (), "max_redeals")
            return
        self._dealer = (self._dealer + 1) & 3
        self._new_deal(events)

    def _play(self, card: str) -> list[Event]:
        seat = self._turn
        self._hands[seat].remove(card)
        trick = self._trick
        trick.append(card)
        events = [Event({"type": "play", "seat": seat, "card": card})]
        if len(trick) == 1:
            self._led = self._esuit[card]
        if len(trick) < 4:
            self._turn = (seat + 1) & 3
            return events
        # BA-8.4: highest trump, else highest card of the suit led.
        esuit, key, led, trump = self._esuit, self._key, self._led, self._trump
        best = key[trick[0]]
        win = 0
        for i in (1, 2, 3):
            c = trick[i]
            s = esuit[c]
            if s in (led, trump):
                k = key[c]
                if k > best:
                    best, win = k, i
        leader = self._leader
        winner = (leader + win) & 3
        won = self._won
        won[TEAM[winner]] += 1
        if not self._broken and self._trumps is not None and not self._trumps.isdisjoint(trick):
            self._broken = True
        self._past.append((leader, tuple(trick), winner))
        events.append(Event({
            "type": "trick", "n": len(self._past), "leader": leader, "cards": trick,
            "winner": winner, "tricks_won": won[:],
        }))
        self._trick = []
        self._leader = self._turn = winner
        if len(self._past) == self._h:
            self._end_deal(events)
        return events

    def _end_deal(self, events: list[Event]) -> None:
        h = self._h
        contracts = self._contracts
        assert contracts is not None
        deal_scores = [deal_score(t, m, self._won[i], h) for i, (t, m) in enumerate(contracts)]
        self._scores[0] += deal_scores[0]
        self._scores[1] += deal_scores[1]
        events.append(Event({
            "type": "deal_score", "deal": self._deal, "h": h, "dealer": self._dealer,
            "trump": self._trump,
            "contracts": [{"target": t, "board": m} for t, m in contracts],
            "tricks_won": self._won[:], "deal_scores": deal_scores, "scores": self._scores[:],
        }))
        if self._deal == NUM_DEALS:  # BA-10
            a, b = self._scores
            if a == b:
                self._finish(events, "draw", (), "all_deals_played")
            else:
                self._finish(events, "win", (0 if a > b else 1,), "all_deals_played")
            return
        self._deal += 1
        self._h = hand_size(self._deal)
        self._dealer = (self._dealer + 1) & 3
        self._new_deal(events)

    def _finish(self, events: list[Event], status: str, winners: tuple[int, ...], reason: str) -> None:
        self._phase = OVER
        self._legal = None
        outcome = self._outcome = Outcome(
            status=status,  # type: ignore[arg-type]
            winners=winners,
            scores=tuple(self._scores),
            reason=reason,
            detail={"deal": self._deal, "redeals": self._redeals},
        )
        events.append(Event({"type": "game_over", **outcome.to_json()}))

    # -- observation ------------------------------------------------------

    def observe(self, seat: int) -> dict[str, JSON]:
        if not 0 <= seat < NUM_SEATS:
            raise ValueError(f"no seat {seat}")
        contracts = self._contracts
        phase = self._phase
        in_play = phase == PLAY or (phase == OVER and contracts is not None)
        return {
            "seat": seat,
            "team": TEAM[seat],
            "phase": _PHASE_NAMES[phase],
            "to_act": self.to_act(),
            "deal": self._deal,
            "num_deals": NUM_DEALS,
            "h": self._h,
            "dealer": self._dealer,
            "redeals": self._redeals,
            "hand": self._hands[seat][:],
            "turn_up": self._turn_up,
            "trump": self._trump,
            "joker_discard": (
                None if self._discard is None
                else {"seat": self._discard[0], "card": self._discard[1]}
            ),
            "bids": self._bids[:],
            "board_levels": self._boards[:],
            "contracts": (
                None if contracts is None else [{"target": t, "board": m} for t, m in contracts]
            ),
            "trick": (
                {"leader": self._leader, "cards": self._trick[:]} if in_play else None
            ),
            "past_tricks": [
                {"leader": ld, "cards": list(cards), "winner": w} for ld, cards, w in self._past
            ],
            "tricks_won": self._won[:],
            "broken": self._broken,
            "scores": self._scores[:],
        }

    # -- copying ----------------------------------------------------------

    def clone(self) -> BackAlleyState:
        new = object.__new__(BackAlleyState)
        for name in self.__slots__:
            setattr(new, name, getattr(self, name))
        rng = random.Random()
        rng.setstate(self._rng.getstate())
        new._rng = rng
        new._scores = self._scores[:]
        new._hands = [hd[:] for hd in self._hands]
        new._bids = self._bids[:]
        new._nums = self._nums[:]
        new._boards = self._boards[:]
        new._contracts = None if self._contracts is None else self._contracts[:]
        new._trick = self._trick[:]
        new._past = self._past[:]
        new._won = self._won[:]
        new._legal = None if self._legal is None else self._legal[:]
        return new


class BackAlleySpec(GameSpec):
    name = "back-alley"
    title = "Back Alley"
    rules_version = "2"  # 2: unified events (redeal, draw + drawn, game_over with detail)
    action_type = Action

    def normalize_options(self, options: Mapping[str, JSON] | None) -> dict[str, JSON]:
        out = merge_options("Back Alley", options, DEFAULT_OPTIONS)
        positive_int("max_redeals", out["max_redeals"])
        return out

    def num_seats(self, options: Mapping[str, JSON] | None = None) -> int:
        return NUM_SEATS

    def num_teams(self, options: Mapping[str, JSON] | None = None) -> int:
        return NUM_TEAMS

    def new_game(
        self, seed: int, options: Mapping[str, JSON] | None = None
    ) -> tuple[BackAlleyState, list[Event]]:
        opts = self.normalize_options(options)
        rng = random.Random(seed)
        dealer = randbelow(rng, NUM_SEATS)  # 0.4
        state = BackAlleyState(opts, rng, dealer)
        events: list[Event] = []
        state._new_deal(events)
        return state, events

    def determinize(self, view: View, rng: random.Random) -> BackAlleyState:
        from .determinize import determinize  # the sampler builds on this module

        return determinize(view, rng)


SPEC = BackAlleySpec()

__all__ = [
    "SPEC", "BackAlleySpec", "BackAlleyState", "NUM_DEALS", "contract_text", "deal_score",
    "hand_size",
]
