"""Back Alley determinizer: a full state drawn among those one seat's view allows.

What the seat knows (``observe(seat)``, which holds everything about the
current deal that the seat was sent; ``view.events`` are not read):

* its own hand, the turn-up (BA-3), the joker discard (BA-3.2), every card
  played in this deal (past tricks and the trick in progress), the bids;
* so every other seat's hand size: ``h`` minus the cards it played.

What it infers, and every sample respects:

* **voids** (BA-8.1): a seat that did not follow the suit led holds none of it;
* **BA-8.3**: after ``BJ`` is led a follower that played a trump holds no
  higher trump, after ``LJ`` none lower; one that played no trump holds none;
* **BA-8.2**: a seat that led a trump before trumps were broken without having
  bid board held nothing but trumps;
* **BA-3.2**: in a no-trump deal no hand holds a joker (the other joker was
  discarded face up, or is still in the stock).

A constraint learnt at a trick holds for the rest of the deal (cards only
leave a hand).  The unseen cards are dealt to the other hands and the stock
by ``sampling.constrained_deal`` (uniform among the consistent deals, see
there).

**The future** is not the real one: the engine keeps no stock once a deal is
dealt (later deals are reshuffled from the state's generator), and the
sample's generator is seeded from ``rng``.  So later deals in a rollout are
fresh random deals, independent of the true seed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..base import InconsistentView, Outcome, View
from ..sampling import constrained_deal
from .notation import CARD_SET, DECK, JOKERS
from .rules import (
    _BIDS,
    _ORDER_KEY,
    _PHASE_NAMES,
    _TABLES,
    NUM_DEALS,
    NUM_SEATS,
    BackAlleyState,
    hand_size,
)

_PHASES = {name: i for i, name in enumerate(_PHASE_NAMES)}


def determinize(view: View, rng: random.Random) -> BackAlleyState:
    """A ``BackAlleyState`` consistent with ``view`` (see the module docstring)."""
    try:
        state = _sample(view, rng)
    except InconsistentView:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InconsistentView(f"not a Back Alley view: {type(exc).__name__}: {exc}") from None
    if state.observe(view.seat) != view.state:
        raise InconsistentView("the view's fields do not agree with each other (no state observes as this view)")
    return state


def _cards(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) and c in CARD_SET for c in value):
        raise InconsistentView(f"{what} is not a list of Back Alley cards: {value!r}")
    return value


def _int(value: Any, what: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise InconsistentView(f"{what} must be an integer {lo} … {hi}, got {value!r}")
    return value


def _sample(view: View, rng: random.Random) -> BackAlleyState:
    obs: Mapping[str, Any] = view.state
    seat = _int(view.seat, "seat", 0, NUM_SEATS - 1)
    if obs["seat"] != seat:
        raise InconsistentView(f"the view's state is seat {obs['seat']!r}'s, not seat {seat}'s")
    max_redeals = _int(view.options["max_redeals"], "max_redeals", 1, 1 << 62)
    phase = _PHASES.get(obs["phase"])
    if phase is None:
        raise InconsistentView(f"unknown phase {obs['phase']!r}")
    deal = _int(obs["deal"], "deal", 1, NUM_DEALS)
    h = hand_size(deal)
    if obs["h"] != h:
        raise InconsistentView(f"deal {deal} has {h} cards per hand, the view says {obs['h']!r}")
    dealer = _int(obs["dealer"], "dealer", 0, NUM_SEATS - 1)
    redeals = _int(obs["redeals"], "redeals", 0, max_redeals)
    turn_up = obs["turn_up"]
    if turn_up not in CARD_SET:
        raise InconsistentView(f"the turn-up {turn_up!r} is no card")
    trump = None if turn_up in JOKERS else turn_up[1]
    esuit, key, trumps = _TABLES[trump]
    hand = _cards(obs["hand"], "the hand")
    bids = obs["bids"]
    levels = obs["board_levels"]
    if not isinstance(bids, list) or len(bids) != NUM_SEATS or not isinstance(levels, list):
        raise InconsistentView("bids and board_levels need one entry per seat")
    legal_bids = _BIDS[h]
    nums = [0] * NUM_SEATS
    boards = [0] * NUM_SEATS
    nbids = 0
    order = [(dealer + 1 + i) % NUM_SEATS for i in range(NUM_SEATS)]
    for i, s in enumerate(order):
        b = bids[s]
        if b is None:
            if any(bids[t] is not None for t in order[i:]):
                raise InconsistentView("bids are made in turn from the dealer's left (BA-5)")
            continue
        if b not in legal_bids:
            raise InconsistentView(f"{b!r} is no bid with {h} cards (BA-5)")
        nbids += 1
        if b == "board":
            boards[s] = sum(1 for t in order[: i + 1] if bids[t] == "board")
        elif b != "pass":
            nums[s] = int(b)
    last_board = max(range(NUM_SEATS), key=lambda s: boards[s]) if any(boards) else -1
    if last_board >= 0:  # BA-7: who leads the first trick
        first_leader = last_board
    else:
        first_leader, best = -1, 0
        for s in order:
            if nums[s] > best:
                first_leader, best = s, nums[s]

    # -- the tricks: who played what, and what each seat showed it lacks ------
    trick_obs = obs["trick"]
    past = obs["past_tricks"]
    if not isinstance(past, list) or len(past) > h:
        raise InconsistentView(f"past_tricks must be a list of at most {h} tricks")
    tricks = [(t["leader"], _cards(t["cards"], "a trick's cards"), t["winner"]) for t in past]
    if trick_obs is not None:
        tricks.append((trick_obs["leader"], _cards(trick_obs["cards"], "the trick"), None))
    played = [0] * NUM_SEATS
    refused: list[set[str]] = [set() for _ in range(NUM_SEATS)]
    broken = False
    won = [0, 0]
    past_out: list[tuple[int, tuple[str, ...], int]] = []
    leader = -1
    led = ""
    for n, (ld, cards, winner) in enumerate(tricks):
        ld = _int(ld, "a trick's leader", 0, NUM_SEATS - 1)
        complete = winner is not None
        if len(cards) != NUM_SEATS if complete else len(cards) >= NUM_SEATS:
            raise InconsistentView(f"trick {n + 1} has {len(cards)} cards")
        if n == 0 and ld != first_leader:
            raise InconsistentView(f"the first trick is led by seat {first_leader} (BA-7), not seat {ld}")
        if n and ld != past_out[-1][2]:
            raise InconsistentView(f"trick {n + 1} is led by seat {ld}, not by the last trick's winner")
        leader = ld
        if not cards:
            continue
        for i, c in enumerate(cards):
            s = (ld + i) % NUM_SEATS
            if c in refused[s]:
                raise InconsistentView(f"seat {s} played {c} in trick {n + 1}, which it had shown it could not hold")
            played[s] += 1
        first = cards[0]
        if trumps is not None and first in trumps and not broken and not boards[ld]:
            # BA-8.2 (ruling): a trump led before trumps broke, by a non-board bidder:
            # the leader held nothing but trumps.
            refused[ld].update(c for c in DECK if c not in trumps)
        led = esuit[first]
        for i in range(1, len(cards)):
            s = (ld + i) % NUM_SEATS
            c = cards[i]
            if esuit[c] != led:  # BA-8.1: void in the suit led
                refused[s].update(d for d in DECK if esuit[d] == led)
            elif first == "BJ" and trumps is not None:  # BA-8.3: its highest trump
                refused[s].update(d for d in trumps if key[d] > key[c])
            elif first == "LJ" and trumps is not None:  # BA-8.3: its lowest trump
                refused[s].update(d for d in trumps if key[d] < key[c])
        if complete:
            best, win = key[first], 0
            for i in (1, 2, 3):
                c = cards[i]
                if esuit[c] in (led, trump) and key[c] > best:
                    best, win = key[c], i
            w = (ld + win) % NUM_SEATS
            if winner != w:
                raise InconsistentView(f"trick {n + 1} was won by seat {w}, not {winner!r} (BA-8.4)")
            won[w % 2] += 1
            if trumps is not None and not trumps.isdisjoint(cards):
                broken = True
            past_out.append((ld, tuple(cards), w))
    current = tricks[-1][1] if trick_obs is not None else []
    if trick_obs is None and tricks:
        raise InconsistentView("past tricks without a trick in progress")
    if not current:
        led = ""

    # -- the joker discard (BA-3.2) -------------------------------------------
    jd = obs["joker_discard"]
    discard: tuple[int, str] | None = None
    if jd is not None:
        if trump is not None or jd["card"] != ("LJ" if turn_up == "BJ" else "BJ"):
            raise InconsistentView("a joker is discarded only when the other joker is turned up (BA-3.2)")
        discard = (_int(jd["seat"], "the joker discarder", 0, NUM_SEATS - 1), jd["card"])

    # -- the unseen cards ------------------------------------------------------
    known = Counter(hand)
    known[turn_up] += 1
    if discard is not None:
        known[discard[1]] += 1
    for _, cards, _w in tricks:
        known.update(cards)
    dup = sorted(c for c, k in known.items() if k > 1)
    if dup:
        raise InconsistentView(f"seen twice: {' '.join(dup)}")
    sizes = [h - played[s] for s in range(NUM_SEATS)]
    if len(hand) != sizes[seat]:
        raise InconsistentView(f"seat {seat} should hold {sizes[seat]} cards, the view shows {len(hand)}")
    if trump is None:
        for s in range(NUM_SEATS):
            refused[s].update(JOKERS)  # BA-3.2: no joker stays in a hand in a no-trump deal
    if not refused[seat].isdisjoint(hand):
        raise InconsistentView(f"seat {seat}'s hand holds a card its own plays showed it lacks")
    others = [s for s in range(NUM_SEATS) if s != seat]
    pool = [c for c in DECK if c not in known]
    stock = 54 - NUM_SEATS * h - 1 - (discard is not None)
    dealt = constrained_deal(
        pool,
        [*(sizes[s] for s in others), stock],
        [*(frozenset(refused[s]) for s in others), frozenset()],
        rng,
    )
    hands: list[list[str]] = [[], [], [], []]
    hands[seat] = sorted(hand, key=_ORDER_KEY)
    for s, cards in zip(others, dealt, strict=False):
        hands[s] = sorted(cards, key=_ORDER_KEY)

    # -- the state -------------------------------------------------------------
    contracts_obs = obs["contracts"]
    contracts = None
    if contracts_obs is not None:
        contracts = [(int(c["target"]), int(c["board"])) for c in contracts_obs]
    new = object.__new__(BackAlleyState)
    new._max_redeals = max_redeals
    new._rng = random.Random(rng.getrandbits(64))  # the future: fresh, not the real seed
    new._deal = deal
    new._h = h
    new._dealer = dealer
    new._redeals = redeals
    new._scores = [int(x) for x in obs["scores"]]
    new._phase = phase
    to_act = obs["to_act"]
    if phase == _PHASES["bid"]:
        if tricks or contracts is not None or to_act != order[nbids % NUM_SEATS] or nbids >= NUM_SEATS:
            raise InconsistentView("in the bidding, the next bidder acts and no card has been played")
    elif phase == _PHASES["play"] and (
        contracts is None or trick_obs is None or to_act != (leader + len(current)) % NUM_SEATS
    ):
        raise InconsistentView("in the play, the seat after the last card acts")
    new._turn = to_act if to_act is not None else 0
    new._hands = hands
    new._turn_up = turn_up
    new._trump = trump
    new._esuit, new._key, new._trumps = esuit, key, trumps
    new._discard = discard
    new._bids = list(bids)
    new._nums = nums
    new._boards = boards
    new._nbids = nbids
    new._nboards = max(boards)
    new._last_board = last_board
    new._contracts = contracts
    new._leader = leader
    new._trick = list(current)
    new._led = led
    new._past = past_out
    new._won = won
    new._broken = broken
    new._legal = None
    new._outcome = None
    if phase == _PHASES["over"]:
        a, b = new._scores
        if contracts is None:
            new._outcome = Outcome("aborted", (), (a, b), "max_redeals", {"deal": deal, "redeals": redeals})
        else:
            status = "draw" if a == b else "win"
            winners = () if a == b else ((0,) if a > b else (1,))
            new._outcome = Outcome(status, winners, (a, b), "all_deals_played",  # type: ignore[arg-type]
                                   {"deal": deal, "redeals": redeals})
    return new
