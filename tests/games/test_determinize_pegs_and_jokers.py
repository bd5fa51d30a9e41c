"""Pegs and Jokers determinizer (issue #23): samples agree with everything the seat saw.

The property test follows a real game and keeps, from the real state (not from
the events the sampler reads), what a sample must respect:

* the card multiset: the seat's hand + the discard pile + the sampled hands and
  draw pile are the PJ-1 cards;
* PJ-3: after a reshuffle the draw pile holds only cards of the reshuffled
  discard pile, less the cards the seat itself drew from it;
* PJ-4.3: a seat that discarded held five cards with no legal non-joker move on
  the board it faced; having drawn ``k`` cards since, at most ``k`` of its cards
  now plus its plays since can have had a move then (each card checked by the
  engine on a copy of that past state).
"""

from __future__ import annotations

import collections
import json
import random

import pytest

from referee.games import InconsistentView, View
from referee.games.pegs_and_jokers import SPEC
from referee.games.pegs_and_jokers.rules import PegsAndJokersState, deck_for

from .determinize_helpers import determinize_in_subprocess


class Follow:
    """A real game, with each seat's events and the facts a sample must respect."""

    def __init__(self, players, seed):
        self.options = SPEC.normalize_options({"players": players})
        self.n = players
        self.state, events = SPEC.new_game(seed, self.options)
        self.seen = [[e.data for e in events if e.visible_to(s)] for s in range(players)]
        self.pile = None  # Counter of the reshuffled pile, or None before any reshuffle
        self.drawn_from_pile = [collections.Counter() for _ in range(players)]
        self.discarded = {}  # seat -> [state before its last discard, card, cards drawn since, cards played since]

    def apply(self, action):
        st = self.state
        before = st.clone() if action.startswith("discard") else st
        discard_before = list(st.discard_pile)
        pile_before = list(st.draw_pile)
        seat = st.seat
        events = st.apply(action)
        kinds = [e.data["type"] for e in events]
        if "discard" in kinds:
            self.discarded[seat] = [before, action.split()[1], 0, []]
        elif seat in self.discarded:
            self.discarded[seat][3].append(action[:2])
        if st.to_act() is None:
            return events
        nxt = st.seat
        if "reshuffle" in kinds:
            reshuffled = collections.Counter(discard_before + [action[:2] if "move" in kinds
                                                               else action.split()[1]])
            self.pile = reshuffled
            self.drawn_from_pile = [collections.Counter() for _ in range(self.n)]
            self.drawn_from_pile[nxt] += reshuffled - collections.Counter(st.draw_pile)
            drew = len(pile_before) + reshuffled.total() - len(st.draw_pile)
        else:
            self.drawn_from_pile[nxt] += collections.Counter(pile_before[len(st.draw_pile):])
            drew = len(pile_before) - len(st.draw_pile)
        if nxt in self.discarded:
            self.discarded[nxt][2] += drew
        for s in range(self.n):
            self.seen[s].extend(e.data for e in events if e.visible_to(s))
        return events

    def view(self, seat, with_events=True):
        return View(seat, self.options, self.state.observe(seat), tuple(self.seen[seat]) if with_events else ())

    def check(self, sample, view):
        real = self.state
        seat = view.seat
        assert isinstance(sample, PegsAndJokersState)
        assert sample.observe(seat) == view.state
        assert sample.to_act() == real.to_act()
        if real.to_act() == seat:
            assert sample.legal_actions() == real.legal_actions()
        everything = [c for h in sample.hands for c in h] + sample.draw_pile + sample.discard_pile
        assert sorted(everything) == sorted(deck_for(self.n))
        assert [len(h) for h in sample.hands] == [len(h) for h in real.hands]
        if self.pile is not None and view.events:  # PJ-3
            allowed = self.pile - self.drawn_from_pile[seat]
            assert not collections.Counter(sample.draw_pile) - allowed
        if view.events:
            for s, (before, _card, drew, since) in self.discarded.items():  # PJ-4.3
                if s == seat:
                    continue
                probe = before.clone()
                movable = 0
                for c in list(sample.hands[s]) + since:
                    probe.hands[s] = [c]
                    probe._legal = None
                    movable += any(not a.startswith(("discard", "JK")) for a in probe.legal_actions())
                assert movable <= drew, (s, sample.hands[s], since, drew)


@pytest.mark.slow
@pytest.mark.parametrize(("players", "block"), [(4, 0), (4, 1), (6, 0), (6, 1), (8, 0), (8, 1)])
def test_pj_3_pj_4_3_every_sample_fits_the_piles_and_the_discards_seen(players, block):
    """≥ 1,700 checked samples per case, 10,200+ over the six cases (4, 6 and 8 players)."""
    checked = 0
    reshuffled = discards = 0
    for seed in range(block * 50, block * 50 + 50):
        game = Follow(players, seed)
        rng = random.Random(seed)
        sampler = random.Random(-seed)
        steps = 0
        while game.state.to_act() is not None and steps < 700:
            steps += 1
            if rng.random() < 0.12:
                seat = rng.randrange(players)
                view = game.view(seat)
                game.check(SPEC.determinize(view, sampler), view)
                checked += 1
                reshuffled += game.pile is not None
                discards += bool(set(game.discarded) - {seat})
            game.apply(rng.choice(game.state.legal_actions()))
        if checked >= 1_750:
            break
    assert checked >= 1_700
    assert reshuffled > 100 and discards > 500  # both constraints were exercised


def test_without_events_a_sample_still_observes_as_the_view():
    game = Follow(4, 3)
    rng = random.Random(3)
    for _ in range(400):
        game.apply(rng.choice(game.state.legal_actions()))
    view = game.view(1, with_events=False)
    sample = SPEC.determinize(view, random.Random(0))
    assert sample.observe(1) == view.state


def test_samples_can_be_played_on_to_the_end_of_the_game():
    game = Follow(6, 5)
    rng = random.Random(5)
    for _ in range(200):
        game.apply(rng.choice(game.state.legal_actions()))
    sample = SPEC.determinize(game.view(game.state.to_act()), random.Random(2))
    for _ in range(20_000):
        if sample.to_act() is None:
            break
        sample.apply(rng.choice(sample.legal_actions()))
    assert sample.outcome() is not None


def test_the_hidden_cards_vary_between_samples_and_are_not_the_real_ones():
    game = Follow(4, 8)
    state = game.state
    seat = state.to_act()
    view = game.view(seat)
    rng = random.Random(0)
    left = (seat + 1) % 4
    samples = [SPEC.determinize(view, rng) for _ in range(300)]
    hands = [tuple(sorted(s.hands[left])) for s in samples]
    assert len(set(hands)) > 280
    assert sum(h == tuple(sorted(state.hands[left])) for h in hands) < 3
    piles = {tuple(s.draw_pile) for s in samples}
    assert len(piles) == 300 and tuple(state.draw_pile) not in piles


def test_the_future_is_not_the_real_one():
    game = Follow(4, 21)
    view = game.view(game.state.to_act())
    real_top = game.state.draw_pile[-10:]
    tops = {tuple(SPEC.determinize(view, random.Random(k)).draw_pile[-10:]) for k in range(20)}
    assert len(tops) == 20 and tuple(real_top) not in tops


def test_equal_views_give_identical_samples_whatever_the_real_state():
    """Leak test: a twin state (another sample) with the same view gives the same sample stream."""
    rng = random.Random(3)
    compared = 0
    for seed in range(30):
        game = Follow(rng.choice((4, 6, 8)), seed)
        for _ in range(rng.randrange(1, 600)):
            if game.state.to_act() is None:
                break
            game.apply(rng.choice(game.state.legal_actions()))
        if game.state.to_act() is None:
            continue
        seat = rng.randrange(game.n)
        view = game.view(seat)
        twin = SPEC.determinize(view, random.Random(seed))
        assert twin.observe(seat) == game.state.observe(seat)
        assert twin.draw_pile != game.state.draw_pile
        twin_view = View(seat, game.options, twin.observe(seat), view.events)
        ra, rb = random.Random(7), random.Random(7)
        for _ in range(5):
            sa = SPEC.determinize(view, ra)
            sb = SPEC.determinize(twin_view, rb)
            assert (sa.hands, sa.draw_pile) == (sb.hands, sb.draw_pile)
            assert sa._rng.getstate() == sb._rng.getstate()
        compared += 1
    assert compared >= 20


# --- bad input ----------------------------------------------------------------


def corrupted_views():
    game = Follow(4, 4)
    rng = random.Random(4)
    for _ in range(60):
        game.apply(rng.choice(game.state.legal_actions()))
    good = game.state.observe(0)
    views = {}

    def edit(name, **fields):
        views[name] = View(0, game.options, {**good, **fields}, tuple(game.seen[0]))

    edit("more copies than the decks hold", hand=["JK"] * 5, discard_pile=["JK"] * 5)
    edit("hand sizes beyond the deck", hand_sizes=[len(good["hand"]), 6, 6, 6], draw_pile=500)
    edit("a hand size that is not the hand", hand_sizes=[6, *good["hand_sizes"][1:]])
    edit("a hand that is not a list", hand="AS KS")
    edit("a card that is no card", hand=["ZZ", *good["hand"][1:]])
    edit("two pegs on one hole", pegs=[["T5"] * 5, ["T5"] * 5, *good["pegs"][2:]])
    edit("a seat to act that is no seat", to_act=11)
    views["garbage state"] = View(0, game.options, {"seat": 0})
    views["seat out of range"] = View(9, game.options, good)
    views["bad options"] = View(0, {"players": 5}, good)
    return views


def draw_pile_contradicted_view():
    """After a reshuffle, a view whose hands leave more copies of a card unseen than the
    reshuffled pile and the other hands can hold."""
    game = Follow(4, 6)
    rng = random.Random(6)
    while game.pile is None:
        game.apply(rng.choice(game.state.legal_actions()))
    for _ in range(3):
        game.apply(rng.choice(game.state.legal_actions()))
    seat = (game.state.to_act() + 2) % 4
    view = game.view(seat)
    # Claim that every card of the seat's hand is a joker: the six real jokers then
    # hide elsewhere... make the reshuffled pile impossible instead: put in the seat's
    # events a reshuffle of an empty pile, so nothing may be in the draw pile.
    events = [e for e in view.events if e["type"] not in ("move", "discard")]
    return View(seat, view.options, view.state, tuple(events))


def test_views_no_state_fits_raise_inconsistent_view():
    for name, view in {**corrupted_views(), "draw pile contradicted": draw_pile_contradicted_view()}.items():
        with pytest.raises(InconsistentView):
            SPEC.determinize(view, random.Random(0))
        assert name


def test_views_no_state_fits_are_refused_in_a_subprocess_without_hanging():
    views = [draw_pile_contradicted_view(), *corrupted_views().values()]
    lines = determinize_in_subprocess("pegs-and-jokers", views)
    assert len(lines) == len(views)
    assert all(line.startswith("InconsistentView ") for line in lines), lines


def test_a_view_rebuilt_from_the_wire_gives_the_same_samples():
    """A bot builds its View from JSON lines (hello's options, the request's state, the
    event messages): lists where the engine had tuples must not change a sample."""
    game = Follow(6, 12)
    rng = random.Random(12)
    for _ in range(500):
        game.apply(rng.choice(game.state.legal_actions()))
    seat = game.state.to_act()
    view = game.view(seat)
    wire = View(seat, json.loads(json.dumps(dict(view.options))), json.loads(json.dumps(view.state)),
                tuple(json.loads(json.dumps(list(view.events)))))
    a = SPEC.determinize(view, random.Random(1))
    b = SPEC.determinize(wire, random.Random(1))
    assert (a.hands, a.draw_pile) == (b.hands, b.draw_pile)
    assert a.legal_actions() == game.state.legal_actions()
