"""Schmier determinizer: a full state drawn among those one seat's view allows.

What the seat knows (``observe(seat)``; ``view.events`` are not read — the
state holds everything about the current deal the seat was sent: its hand
with the cards it drew, its own face-down discards, every bid, the contract
and trump, how many cards each seat discarded and drew, every card played):

* the unseen cards are the 53 minus its hand, its discards and the cards
  played this deal;
* they lie in the other hands, the other seats' face-down discards and the
  stock, whose sizes the view gives.

What every sample respects:

* **SC-5.1**: a non-dealer's discards are non-trumps;
* **SC-5.2**: the dealer never discards the Ace or 2 of trump, a Bauer or the
  ``JK`` (so those are always in play), and discards a trump only when it keeps
  six trumps (it keeps every trump it can);
* **SC-6.1**: a seat that did not follow the suit led (a Left Bauer or ``JK``
  counts as trump) holds none of it.

A seat in the middle of a private multi-step turn that is not the viewer's (a
non-dealer laying cards face down before ``done``, the dealer discarding back
to six) is sampled at the start of that turn: how many cards it has already
laid down is its own choice, not chance, and no other seat is told it.

**The future** is not the real one: the stock's order is random in each
sample (the real order is hidden), and later deals are shuffled by the
sample's generator, seeded from ``rng``, never from the real seed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..base import InconsistentView, Outcome, View
from ..cards import SUITS
from ..sampling import constrained_deal
from .rules import (
    BID_VALUE,
    CARD_INDEX,
    CARDS,
    EFFECTIVE,
    GAME_VALUE,
    HAND_SIZE,
    MAX_BID,
    NEXT,
    NON_TRUMPS,
    NUM_SEATS,
    ON_PLAY,
    ON_WIN,
    ORDER,
    PHASE_NAMES,
    PROTECTED,
    SPECIAL,
    STOCK_SIZE,
    TEAM,
    SchmierState,
    normalize_options,
    trick_winner,
)

BID, TRUMP, DISCARD, DEALER_DISCARD, PLAY, OVER = range(6)
_PHASES = {name: i for i, name in enumerate(PHASE_NAMES)}
_TRUMPS = [frozenset(c for c in CARDS if EFFECTIVE[t][c] == t) for t in range(4)]
_SUIT_CARDS = [[frozenset(c for c in CARDS if EFFECTIVE[t][c] == s) for s in range(4)] for t in range(4)]
_KEY = ORDER.__getitem__
#: Relaxed deals tried before the dealer's discard cases are dealt one at a time.
_COUPLED_TRIES = 8


def determinize(view: View, rng: random.Random) -> SchmierState:
    """A ``SchmierState`` consistent with ``view`` (see the module docstring)."""
    try:
        state = _sample(view, rng)
    except InconsistentView:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InconsistentView(f"not a Schmier view: {type(exc).__name__}: {exc}") from None
    if state.observe(view.seat) != view.state:
        raise InconsistentView("the view's fields do not agree with each other (no state observes as this view)")
    return state


def _cards(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) and c in CARD_INDEX for c in value):
        raise InconsistentView(f"{what} is not a list of Schmier cards: {value!r}")
    return value


def _int(value: Any, what: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise InconsistentView(f"{what} must be an integer {lo} … {hi}, got {value!r}")
    return value


def _sample(view: View, rng: random.Random) -> SchmierState:
    obs: Mapping[str, Any] = view.state
    seat = _int(view.seat, "seat", 0, NUM_SEATS - 1)
    if obs["seat"] != seat:
        raise InconsistentView(f"the view's state is seat {obs['seat']!r}'s, not seat {seat}'s")
    options = normalize_options(dict(view.options))
    phase = _PHASES.get(obs["phase"])
    if phase is None:
        raise InconsistentView(f"unknown phase {obs['phase']!r}")
    dealer = _int(obs["dealer"], "dealer", 0, NUM_SEATS - 1)
    hand = _cards(obs["hand"], "the hand")
    mine = _cards(obs["my_discards"], "my_discards")

    # -- bidding (SC-3) --------------------------------------------------------
    bids: list[tuple[int, int]] = []
    high, declarer = 0, -1
    bidder = NEXT[dealer]
    for b in obs["bids"]:
        if b["seat"] != bidder or b["bid"] not in BID_VALUE or len(bids) >= NUM_SEATS or high == MAX_BID:
            raise InconsistentView(f"bids go once round from the dealer's left, each above the last: {b!r}")
        value = BID_VALUE[b["bid"]]
        if value:
            if value <= high:
                raise InconsistentView(f"bid {value} is not above {high} (SC-3)")
            high, declarer = value, bidder
        bids.append((bidder, value))
        bidder = NEXT[bidder]
    trump_text = obs["trump"]
    t = -1 if trump_text is None else SUITS.index(trump_text)
    if (t >= 0) != (phase in (DISCARD, DEALER_DISCARD, PLAY) or (phase == OVER and declarer >= 0)):
        raise InconsistentView("the trump is named after the bidding and before the exchange (SC-4)")
    if phase != BID and phase != OVER and declarer < 0:
        raise InconsistentView("past the bidding with nobody bidding")
    trumps = _TRUMPS[t] if t >= 0 else frozenset()
    eff = EFFECTIVE[t] if t >= 0 else {}

    # -- the exchange (SC-5) ---------------------------------------------------
    dcounts = obs["discard_counts"]
    drcounts = obs["draw_counts"]
    if len(dcounts) != NUM_SEATS or len(drcounts) != NUM_SEATS:
        raise InconsistentView("discard_counts and draw_counts need one entry per seat")
    to_act = obs["to_act"]
    actor = to_act
    drawn_total = 0
    for s in range(NUM_SEATS):
        d, n = dcounts[s], drcounts[s]
        if d is not None:
            _int(d, "a discard count", 0, STOCK_SIZE)
        if n is not None:
            drawn_total += _int(n, "a draw count", 0, STOCK_SIZE)
        if s != dealer and d != n:
            raise InconsistentView(f"seat {s} draws as many cards as it discards (SC-5.1)")
        if s != dealer and d is not None and d > 3:
            raise InconsistentView(f"seat {s} discarded {d} cards; at most 3 (SC-5.1)")
    if drawn_total > STOCK_SIZE:
        raise InconsistentView(f"{drawn_total} cards drawn from a stock of {STOCK_SIZE}")
    if mine and (t < 0 or (seat != dealer and not trumps.isdisjoint(mine))):
        raise InconsistentView("a non-dealer discards non-trumps only, after the trump is named (SC-5.1)")
    if seat != dealer and dcounts[seat] is not None and len(mine) != dcounts[seat]:
        raise InconsistentView("my_discards disagrees with my discard count")

    # -- the play (SC-6) -------------------------------------------------------
    tricks_obs = obs["tricks"]
    trick_obs = obs["trick"]
    plays: list[list[tuple[int, str]]] = []
    for tr in tricks_obs:
        ld = _int(tr["leader"], "a trick's leader", 0, NUM_SEATS - 1)
        plays.append([((ld + i) % NUM_SEATS, c) for i, c in enumerate(_cards(tr["cards"], "a trick"))])
    if trick_obs is not None:
        ld = _int(trick_obs["leader"], "the leader", 0, NUM_SEATS - 1)
        plays.append([((ld + i) % NUM_SEATS, c) for i, c in enumerate(_cards(trick_obs["cards"], "the trick"))])
    if plays and t < 0:
        raise InconsistentView("cards played before a trump was named")
    refused: list[set[str]] = [set() for _ in range(NUM_SEATS)]
    played = [0] * NUM_SEATS
    points: list[int | None] = [None] * 6
    counts = [0, 0, 0]
    won = [0, 0, 0]
    past: list[tuple[int, tuple[str, ...], int]] = []
    pending: list[int] = []
    leader = declarer
    for n, trick in enumerate(plays):
        complete = n < len(tricks_obs)
        if len(trick) != NUM_SEATS if complete else len(trick) >= NUM_SEATS:
            raise InconsistentView(f"trick {n + 1} has {len(trick)} cards")
        if trick and trick[0][0] != leader:
            raise InconsistentView(f"trick {n + 1} is led by seat {trick[0][0]}, not seat {leader} (SC-6)")
        if not trick:
            if complete or trick_obs["leader"] != leader:
                raise InconsistentView("the trick in progress is led by the last trick's winner")
            continue
        led = eff[trick[0][1]]
        pending = []
        for i, (s, c) in enumerate(trick):
            if c in refused[s]:
                raise InconsistentView(f"seat {s} played {c}, a suit it had shown void in (SC-6.1)")
            played[s] += 1
            if i and eff[c] != led:
                refused[s] |= _SUIT_CARDS[t][led]
            if c in ON_PLAY[t]:
                points[ON_PLAY[t][c]] = TEAM[s]
            elif c in ON_WIN[t]:
                pending.append(ON_WIN[t][c])
        if complete:
            w = (leader + trick_winner([c for _, c in trick], t)) % NUM_SEATS
            if tricks_obs[n]["winner"] != w:
                raise InconsistentView(f"trick {n + 1} was won by seat {w} (SC-6.2)")
            for p in pending:
                points[p] = TEAM[w]
            pending = []
            won[TEAM[w]] += 1
            counts[TEAM[w]] += sum(GAME_VALUE[c] for _, c in trick)
            past.append((leader, tuple(c for _, c in trick), w))
            leader = w
    if len(past) > HAND_SIZE or (past and phase not in (PLAY, OVER)):
        raise InconsistentView("tricks outside the play")
    if phase == OVER and len(past) == HAND_SIZE:
        top = max(counts)
        points[5] = counts.index(top) if counts.count(top) == 1 else None  # SC-7.6

    # -- where the unseen cards lie ---------------------------------------------
    known = Counter(hand)
    known.update(mine)
    for trick in plays:
        known.update(c for _, c in trick)
    dup = sorted(c for c, k in known.items() if k > 1)
    if dup:
        raise InconsistentView(f"seen twice: {' '.join(dup)}")
    hand_size = [HAND_SIZE] * NUM_SEATS
    pile_size = [0] * NUM_SEATS
    pile_refused: list[frozenset[str]] = [frozenset()] * NUM_SEATS
    stock = 0
    if phase in (BID, TRUMP) or (phase == OVER and declarer < 0):
        stock = STOCK_SIZE
    elif phase == DISCARD:
        stock = STOCK_SIZE - drawn_total
        for s in range(NUM_SEATS):
            if dcounts[s] is not None:
                pile_size[s] = dcounts[s]
        if actor == seat:
            pile_size[seat] = len(mine)
            hand_size[seat] = HAND_SIZE - len(mine)
    elif phase == DEALER_DISCARD:
        for s in range(NUM_SEATS):
            pile_size[s] = dcounts[s] or 0
        hand_size[dealer] = HAND_SIZE + drcounts[dealer]
        if seat == dealer:
            pile_size[seat] = len(mine)
            hand_size[seat] -= len(mine)
    else:  # the play
        for s in range(NUM_SEATS):
            pile_size[s] = dcounts[s]
            hand_size[s] = HAND_SIZE - played[s]
        if dcounts[dealer] != drcounts[dealer]:
            raise InconsistentView("the dealer discards back to six cards (SC-5.2)")
    if t >= 0:
        for s in range(NUM_SEATS):
            pile_refused[s] = trumps if s != dealer else PROTECTED[t]
    if len(hand) != hand_size[seat] or len(mine) != pile_size[seat]:
        raise InconsistentView(f"seat {seat} should hold {hand_size[seat]} cards and have discarded {pile_size[seat]}")
    if not refused[seat].isdisjoint(hand):
        raise InconsistentView(f"seat {seat}'s hand holds a suit its own plays showed void")
    if seat == dealer and phase in (PLAY, OVER) and declarer >= 0 and not _dealer_discards_ok(
        hand + [c for tr in plays for s, c in tr if s == dealer], mine, t
    ):
        raise InconsistentView("the dealer's discards break SC-5.2")
    others = [s for s in range(NUM_SEATS) if s != seat]
    pool = [c for c in CARDS if c not in known]
    sizes = [*(hand_size[s] for s in others), *(pile_size[s] for s in others), stock]
    hand_ref = [frozenset(refused[s]) for s in others]
    pile_ref = [pile_refused[s] for s in others]
    coupled = (
        phase in (PLAY, OVER) and declarer >= 0 and seat != dealer and pile_size[dealer] > 0
        and all(c in trumps for tr in plays for s, c in tr if s == dealer)
    )
    d = others.index(dealer) if dealer != seat else -1
    if phase in (PLAY, OVER) and declarer >= 0 and seat != dealer and not coupled:
        pile_ref[d] = trumps  # the dealer kept a non-trump: it discarded no trump
    dealt = None
    if coupled:
        # SC-5.2 couples the dealer's pile and hand: a trump in the pile means six trumps kept.
        for _ in range(_COUPLED_TRIES):
            try_deal = constrained_deal(pool, sizes, [*hand_ref, *pile_ref, frozenset()], rng)
            pile, kept = try_deal[len(others) + d], try_deal[d]
            if trumps.isdisjoint(pile) or trumps.issuperset(kept):
                dealt = try_deal
                break
        if dealt is None:
            cases = [([*hand_ref, *pile_ref[:d], trumps, *pile_ref[d + 1:]]),
                     ([*hand_ref[:d], hand_ref[d] | NON_TRUMPS[t], *hand_ref[d + 1:], *pile_ref])]
            rng.shuffle(cases)
            for refs in cases:
                try:
                    dealt = constrained_deal(pool, sizes, [*refs, frozenset()], rng)
                    break
                except InconsistentView:
                    continue
            if dealt is None:
                raise InconsistentView("no deal fits the dealer's discards (SC-5.2) and the voids shown")
    else:
        dealt = constrained_deal(pool, sizes, [*hand_ref, *pile_ref, frozenset()], rng)
    hands: list[list[str]] = [[] for _ in range(NUM_SEATS)]
    discards: list[list[str]] = [[] for _ in range(NUM_SEATS)]
    hands[seat] = sorted(hand, key=_KEY)
    discards[seat] = list(mine)
    for i, s in enumerate(others):
        hands[s] = sorted(dealt[i], key=_KEY)
        discards[s] = dealt[len(others) + i]

    # -- the state ---------------------------------------------------------------
    new = object.__new__(SchmierState)
    new.options = options
    new._max_redeals = options["max_redeals"]
    new._max_deals = options["max_deals"]
    new._rng = random.Random(rng.getrandbits(64))  # the future: fresh, not the real seed
    new.scores = [int(x) for x in obs["scores"]]
    new.dealer = dealer
    new.deal = obs["deal"]
    new.played = obs["played_deals"]
    new.redeals = obs["redeals"]
    new.phase = phase
    new.actor = to_act
    new.hands = hands
    new.stock = dealt[-1]
    new.bids = bids
    new.high = high
    new.declarer = declarer
    new.trump = t
    new._eff = eff
    new._special = SPECIAL[t] if t >= 0 else {}
    new._pending = pending if phase == PLAY else []
    new._led = eff[plays[-1][0][1]] if phase == PLAY and plays and plays[-1] else -1
    new.discards = discards
    new.discard_counts = list(dcounts)
    new.draw_counts = list(drcounts)
    new._turn_discards = len(mine) if phase == DISCARD and actor == seat else 0
    new._need_trump = new._need_other = 0
    if phase == DEALER_DISCARD:
        kept_all = hands[dealer] + discards[dealer]
        n_trumps = sum(c in trumps for c in kept_all)
        need = max(0, n_trumps - HAND_SIZE)
        done_trumps = sum(c in trumps for c in discards[dealer])
        new._need_trump = need - done_trumps
        new._need_other = drcounts[dealer] - need - (len(discards[dealer]) - done_trumps)
        if new._need_trump < 0 or new._need_other < 0 or not PROTECTED[t].isdisjoint(discards[dealer]):
            raise InconsistentView("the dealer's discards so far break SC-5.2")
        if to_act != dealer:
            raise InconsistentView("the dealer discards after taking the stock")
    elif phase == DISCARD:
        order = [(dealer + 1 + i) % NUM_SEATS for i in range(NUM_SEATS - 1)]
        first_open = next((s for s in order if dcounts[s] is None), None)
        if to_act != first_open:
            raise InconsistentView("the exchange goes round from the dealer's left (SC-5.1)")
    elif phase == BID and to_act != bidder:
        raise InconsistentView("the next bidder acts")
    elif phase == TRUMP and to_act != declarer:
        raise InconsistentView("the declarer names the trump (SC-4)")
    elif phase == PLAY and to_act != (leader + len(plays[-1]) if plays and len(plays) > len(past)
                                      else leader) % NUM_SEATS:
        raise InconsistentView("in the play, the seat after the last card acts")
    new.leader = leader if phase == PLAY else -1
    new.trick = [c for _, c in plays[-1]] if phase == PLAY and len(plays) > len(past) else []
    new.tricks = past
    new.tricks_won = won
    new.points = points
    new.counts = counts
    new._by_suit = []
    new._outcome = None
    if phase == PLAY:
        new._by_suit = [[[c for c in h if eff[c] == s] for s in range(4)] for h in hands]
    if phase == OVER:
        if declarer < 0:
            new._outcome = Outcome("aborted", (), tuple(new.scores), "max_redeals", {"redeals": new.redeals})
        else:
            new._outcome = new._end_check(TEAM[declarer])
            if new._outcome is None:
                raise InconsistentView("the game is over but no team reached the target or the deal limit")
    new._legal = new._compute_legal()
    return new


def _dealer_discards_ok(kept: list[str], discards: list[str], t: int) -> bool:
    """SC-5.2 for a dealer's six kept cards and its discards."""
    trumps = _TRUMPS[t]
    discarded_trumps = sum(c in trumps for c in discards)
    total = discarded_trumps + sum(c in trumps for c in kept)
    return discarded_trumps == max(0, total - HAND_SIZE) and PROTECTED[t].isdisjoint(discards)
