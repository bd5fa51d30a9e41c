"""Pegs and Jokers determinizer: a full state drawn among those one seat's view allows.

The board, every hand size, the draw pile's size and the discard pile are
public (``observe``); the hidden part is the other hands and the order and
content of the draw pile.  The unseen cards are the PJ-1 cards minus the
seat's hand and the discard pile; they are dealt to the other hands and the
draw pile.

**What the state alone does not say: the draw pile after a reshuffle.**  When
the draw pile runs out, the discard pile, shuffled, becomes the draw pile
(PJ-3): from then on every card drawn comes from a pile whose cards every
seat saw played.  ``observe`` shows only the discard pile since the last
reshuffle, so the sampler reads ``view.events`` (the events the seat was
sent) for it: the cards played or discarded before the last reshuffle, minus
the cards this seat drew since, bound what the draw pile may hold (a card
value cannot be in the draw pile more often than that).  Without events the
sample agrees with the observation but may put in the draw pile a card that
cannot be there.

**PJ-4.3** (read from the events too): a seat whose last action was a discard
held, after it, only cards with no legal move for its colour on the board it
faced (or jokers); each sample keeps that seat's hand within such cards
when it has not drawn since.

**The future** is not the real one: the draw pile's order is random in each
sample, and later reshuffles come from the sample's generator, seeded from
``rng``, never from the real seed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..base import InconsistentView, View
from ..sampling import constrained_deal
from .rules import HAND, KIND, SPEC, PegsAndJokersState, deck_for


def determinize(view: View, rng: random.Random) -> PegsAndJokersState:
    """A ``PegsAndJokersState`` consistent with ``view`` (see the module docstring)."""
    try:
        state = _sample(view, rng)
    except InconsistentView:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InconsistentView(f"not a Pegs and Jokers view: {type(exc).__name__}: {exc}") from None
    if state.observe(view.seat) != view.state:
        raise InconsistentView("the view's fields do not agree with each other (no state observes as this view)")
    return state


def _cards(value: Any, what: str, deck: Counter[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(c, str) and c in deck for c in value):
        raise InconsistentView(f"{what} is not a list of Pegs and Jokers cards: {value!r}")
    return value


def _history(events: Sequence[Mapping[str, Any]], seat: int, n: int) -> tuple[Counter[str] | None, list[int]]:
    """From the seat's events: what the draw pile may hold (``None`` before any reshuffle),
    and per seat the turn of its last discard if it has not drawn or moved since (else -1).

    Reads only the tail it needs: back to the reshuffle before the last one, and back
    until every seat's last action is found.
    """
    last_discard = [-1] * n
    open_seats = set(range(n))
    reshuffles: list[int] = []
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        kind = e["type"]
        if open_seats and kind in ("move", "discard", "draw"):
            s = e["seat"]
            if s in open_seats and (kind != "draw" or e["count"]):
                open_seats.discard(s)
                if kind == "discard":
                    last_discard[s] = e["turn"]
        elif kind == "reshuffle":
            reshuffles.append(i)
        if not open_seats and len(reshuffles) == 2:
            break
    if not reshuffles:
        return None, last_discard
    last = reshuffles[0]
    first = reshuffles[1] if len(reshuffles) > 1 else -1
    pile = Counter(e["card"] for e in events[first + 1:last] if e["type"] in ("move", "discard"))
    # The cards this seat drew since come from that pile; a draw may straddle the
    # reshuffle, and then only its cards after the reshuffle do.
    reshuffled = events[last]["draw_pile"]
    from_pile: int | None = None
    for e in events[last + 1:]:
        kind = e["type"]
        if kind == "turn":
            from_pile = None if reshuffled < 0 else reshuffled - e["draw_pile"]
            reshuffled = -1
        elif kind == "drawn" and e["seat"] == seat:
            cards = e["cards"]
            pile.subtract(cards if from_pile is None else cards[len(cards) - from_pile:])
    return +pile, last_discard


def _sample(view: View, rng: random.Random) -> PegsAndJokersState:
    obs: Mapping[str, Any] = view.state
    options = SPEC.normalize_options(dict(view.options))
    n = options["players"]
    seat = view.seat
    if type(seat) is not int or not 0 <= seat < n or obs["seat"] != seat:
        raise InconsistentView(f"seat {seat!r} is no seat of this {n}-player view")
    if obs["players"] != n:
        raise InconsistentView("the view's player count is not the options'")
    to_act = obs["to_act"]
    if to_act is None:
        raise InconsistentView("the game is over: there is no decision to sample for")
    if type(to_act) is not int or not 0 <= to_act < n:
        raise InconsistentView(f"to_act {to_act!r} is no seat")
    deck = Counter(deck_for(n))
    hand = _cards(obs["hand"], "the hand", deck)
    discard = _cards(obs["discard_pile"], "the discard pile", deck)
    sizes = obs["hand_sizes"]
    draw = obs["draw_pile"]
    if (not isinstance(sizes, list) or len(sizes) != n or any(type(k) is not int or not 0 <= k <= HAND for k in sizes)
            or type(draw) is not int or draw < 0):
        raise InconsistentView("hand_sizes needs one size 0 … 6 per seat and draw_pile a count")
    if sizes[seat] != len(hand):
        raise InconsistentView(f"seat {seat} holds {len(hand)} cards, hand_sizes says {sizes[seat]}")
    unseen = deck.copy()
    unseen.subtract(hand)
    unseen.subtract(discard)
    over = sorted(c for c, k in unseen.items() if k < 0)
    if over:
        raise InconsistentView(f"more copies seen than the deck holds: {' '.join(over)}")
    others = [s for s in range(n) if s != seat]
    bins = [sizes[s] for s in others] + [draw]

    pile, last_discard = _history(view.events, seat, n) if view.events else (None, [])
    # Pool items: a card value, or the value + "*" for copies the draw pile cannot take.
    pool: list[str] = []
    for c, k in unseen.items():
        free = k if pile is None else min(k, pile[c])
        pool += [c] * free + [c + "*"] * (k - free)
    restricted = frozenset(c + "*" for c in unseen)
    refused: list[frozenset[str]] = [frozenset()] * len(others) + [restricted]
    if last_discard:
        for i, s in enumerate(others):
            if last_discard[s] >= 0 and s != to_act:
                values = _movable_refused(view.events, s, last_discard[s], obs, n, unseen)
                refused[i] = values | {c + "*" for c in values}
    dealt = constrained_deal(pool, bins, refused, rng)
    hands: dict[int, list[str]] = {seat: list(hand)}
    for s, cards in zip(others, dealt, strict=False):
        hands[s] = [c[:2] for c in cards]
    draw_pile = [c[:2] for c in dealt[-1]]

    try:
        state = PegsAndJokersState.from_position(
            n,
            hands=hands,
            pegs={s: list(p) for s, p in enumerate(obs["pegs"])},
            to_act=to_act,
            dealer=obs["dealer"],
            draw_pile=draw_pile,
            discard_pile=discard,
            turn=obs["turns_played"],
            max_turns=options["max_turns"],
            seed=rng.getrandbits(64),  # the future: fresh, not the real seed
        )
    except ValueError as exc:
        raise InconsistentView(f"no board fits the view: {exc}") from None
    state.hits = list(obs["hits"])
    return state


def _movable_refused(events: Sequence[Mapping[str, Any]], s: int, turn: int, obs: Mapping[str, Any],
                     n: int, unseen: Counter[str]) -> frozenset[str]:
    """PJ-4.3: the card values seat ``s`` could not have held after its discard on ``turn``:
    those of a kind with a legal move for its colour on the board it faced."""
    board = _board_before(events, turn, obs, n)
    if board is None:
        return frozenset()
    colour = next(e["colour"] for e in events if e["type"] == "discard" and e["turn"] == turn)
    probe = PegsAndJokersState.from_position(
        n, hands={colour: ["AS"]}, pegs=dict(enumerate(board)), to_act=colour,
    )
    probe.seat = s
    probe.colour = colour
    refused: set[str] = set()
    for kind_card in ("AS", "KS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS"):
        probe.hands[s] = [kind_card]
        probe._legal = None
        if any(not t.startswith("discard") for t in probe.legal_actions()):
            kind = KIND[kind_card]
            refused.update(c for c in unseen if c != "JK" and KIND[c] == kind)
    return frozenset(refused)


def _board_before(events: Sequence[Mapping[str, Any]], turn: int, obs: Mapping[str, Any],
                  n: int) -> list[list[str]] | None:
    """The pegs (position texts per colour) when turn ``turn`` was played, by undoing the
    moves made since, from the current board."""
    pegs = [list(p) for p in obs["pegs"]]
    for e in reversed(events):
        if e["type"] != "move":
            continue
        if e["turn"] <= turn:
            break
        colour = e["colour"]
        for part in reversed(e["parts"]):
            # Undo the hits, then the peg's own step.
            for owner, frm, to in part["hits"]:
                pegs[owner].remove(to)
                pegs[owner].append(frm)
            frm, to = part["peg"]
            pegs[colour].remove(to)
            pegs[colour].append(frm)
    return pegs
