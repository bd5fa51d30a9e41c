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

**PJ-4.3** (read from the events too): a seat that discarded held, after it,
five cards with no legal non-joker move for its colour on the board it faced
(the board is rebuilt by undoing the moves made since).  It has drawn ``k``
cards and played some since, so at most ``m = k -`` (its plays since that
had a move then) of its cards now can have had a move then.  With ``m = 0``
that is a refusal in the deal; with ``m > 0`` deals are drawn without it and
kept when they meet every bound (up to 8 tries), else drawn with every such
seat held to ``m = 0`` (stricter, still consistent).  Only each seat's last
discard within the last 2,000 events is used.

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


#: How far back (in events) the sampler looks for a seat's last discard.
_DISCARD_LOOKBACK = 2000


def _history(
    events: Sequence[Mapping[str, Any]], seat: int, n: int
) -> tuple[Counter[str] | None, list[tuple[int, int, int, list[str]] | None]]:
    """From the seat's events: what the draw pile may hold (``None`` before any reshuffle),
    and per other seat its last discard as ``(turn, colour, cards drawn since, cards played
    since)``
    (``None`` if it has not discarded in the last ``_DISCARD_LOOKBACK`` events).

    Reads only the tail it needs: back to the reshuffle before the last one, and back
    to every seat's last discard.
    """
    last_discard: list[tuple[int, int, int, list[str]] | None] = [None] * n
    drew = [0] * n
    played: list[list[str]] = [[] for _ in range(n)]
    open_seats = set(range(n)) - {seat}
    reshuffles: list[int] = []
    stop = max(0, len(events) - _DISCARD_LOOKBACK)
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        kind = e["type"]
        if kind == "reshuffle":
            reshuffles.append(i)
        elif open_seats and i > stop and kind in ("move", "discard", "draw"):
            s = e["seat"]
            if s in open_seats:
                if kind == "draw":
                    drew[s] += e["count"]
                elif kind == "move":
                    played[s].append(e["card"])
                else:
                    open_seats.discard(s)
                    last_discard[s] = (e["turn"], e["colour"], drew[s], played[s])
        if (not open_seats or i <= stop) and len(reshuffles) == 2:
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


#: The last view derived and what was derived from it: a search bot samples one view
#: many times, and reading its events (boards rebuilt, moves probed) is the costly part.
#: Keyed by the View object itself (held here, so its id cannot be reused); a View is a
#: value, never changed once made.
_LAST: tuple[View, tuple] | None = None


def _sample(view: View, rng: random.Random) -> PegsAndJokersState:
    global _LAST
    last = _LAST
    if last is not None and last[0] is view:
        derived = last[1]
    else:
        derived = _derive(view)
        _LAST = (view, derived)
    obs, options, n, seat, to_act, hand, discard, others, bins, pool, refused_base, at_most = derived
    refused = list(refused_base)
    dealt = None
    if any(m for _, _, m in at_most):
        relaxed = list(refused)
        for i, values, m in at_most:
            if not m:
                relaxed[i] = values
        for _ in range(8):
            attempt = constrained_deal(pool, bins, relaxed, rng)
            if all(sum(c in values for c in attempt[i]) <= m for i, values, m in at_most):
                dealt = attempt
                break
    if dealt is None:  # every bound as a refusal: stricter, still consistent
        for i, values, _m in at_most:
            refused[i] = values
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


def _derive(view: View) -> tuple:
    """Everything a sample of ``view`` needs that is not drawn at random."""
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
    # PJ-4.3: after its last discard a seat held 5 cards with no legal non-joker move on
    # that board; since, it drew k cards and played P, so at most m = k - |P outside| of
    # its cards now are outside (m = 0: none, a refusal; m > 0: checked on the deal).
    at_most: list[tuple[int, frozenset[str], int]] = []
    turns = sorted({r[0] for r in last_discard if r is not None}, reverse=True) if last_discard else []
    boards = _boards_before(view.events, turns, obs)
    for i, s in enumerate(others):
        record = last_discard[s] if last_discard else None
        if record is None:
            continue
        turn, colour, k, since = record
        values = _movable_refused(boards[turn], s, colour, n, unseen | Counter(since))
        m = k - sum(c in values for c in since)
        if m < 0:
            raise InconsistentView(f"seat {s} played more cards with a move than it drew since its discard (PJ-4.3)")
        if m < sizes[s]:
            at_most.append((i, values | {c + "*" for c in values}, m))
    return (obs, options, n, seat, to_act, hand, discard, others, bins, pool, tuple(refused), tuple(at_most))


def _movable_refused(board: list[list[str]], s: int, colour: int, n: int,
                     unseen: Counter[str]) -> frozenset[str]:
    """PJ-4.3: the card values seat ``s`` could not have held after a discard on ``board``:
    those of a kind with a legal move for its colour there."""
    probe = PegsAndJokersState.from_position(
        n, hands={colour: ["AS"]}, pegs=dict(enumerate(board)), to_act=colour, draw_pile=[],
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


def _boards_before(events: Sequence[Mapping[str, Any]], turns: list[int],
                   obs: Mapping[str, Any]) -> dict[int, list[list[str]]]:
    """The pegs (position texts per colour) as each of ``turns`` (latest first) was
    played, by undoing the moves made since from the current board, in one pass."""
    pegs = [list(p) for p in obs["pegs"]]
    out: dict[int, list[list[str]]] = {}
    want = list(turns)
    for e in reversed(events):
        if not want:
            break
        if e["type"] != "move":
            continue
        while want and e["turn"] <= want[0]:
            out[want.pop(0)] = [list(p) for p in pegs]
        if not want:
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
    for turn in want:  # before every move seen
        out[turn] = [list(p) for p in pegs]
    return out
