"""Schmier determinizer (issue #23): samples agree with everything the seat saw.

The main property test checks each sample with an oracle that shares no code
with the sampler: from the sample's hands, face-down discards, stock and the
cards played it rebuilds a deal (``from_deal``), replays the whole deal —
bids, trump, every discard and draw of the exchange, every card — through the
engine (so each discard must be legal under SC-5.1/SC-5.2 and each card under
SC-6.1 in the sampled world) and asks that the replayed state hold the
sample's cards and observe exactly as the view.
"""

from __future__ import annotations

import collections
import random

import pytest

from referee.games import InconsistentView, View
from referee.games.schmier import SPEC
from referee.games.schmier.rules import CARDS, EFFECTIVE, NUM_SEATS, PROTECTED, SchmierState

from .determinize_helpers import determinize_in_subprocess

OPTIONS = SPEC.normalize_options({})
BID, TRUMP, DISCARD, DEALER_DISCARD, PLAY, OVER = range(6)


def view_of(state, seat):
    return View(seat, OPTIONS, state.observe(seat))


def played_by(obs):
    out = collections.defaultdict(list)
    tricks = [*obs["tricks"], *([obs["trick"]] if obs["trick"] else [])]
    for t in tricks:
        for i, c in enumerate(t["cards"]):
            out[(t["leader"] + i) % NUM_SEATS].append(c)
    return out, [c for t in tricks for c in t["cards"]]


def replay_oracle(sample: SchmierState, view: View) -> SchmierState:
    obs = view.state
    dealer = obs["dealer"]
    played, sequence = played_by(obs)
    order = [(dealer + 1 + i) % NUM_SEATS for i in range(NUM_SEATS)]  # ends with the dealer
    hands = [None] * NUM_SEATS
    stock_top_first: list[str] = []
    draws = obs["draw_counts"]
    for s in order:
        now = list(sample.hands[s]) + played[s]  # the hand after the exchange (or before it)
        discards = list(sample.discards[s])
        n = draws[s] or 0
        drawn, kept = now[:n], now[n:]
        if s == dealer:
            # The dealer's stock cards are any n of its cards after taking them.
            everything = now + discards
            drawn, kept = everything[:n], everything[n:]
            discards = []
        hands[s] = kept + discards
        stock_top_first += drawn
    stock_top_first += list(reversed(sample.stock))
    replay, _ = SchmierState.from_deal(
        dealer, hands, stock_top_first, scores=obs["scores"], options=OPTIONS, deal=obs["deal"],
        played=obs["played_deals"] - (obs["declarer"] is not None), redeals=obs["redeals"],
    )
    for b in obs["bids"]:
        replay.apply(b["bid"])
    if obs["trump"] is not None:
        replay.apply(obs["trump"])
    for s in order:
        if replay.phase not in (DISCARD, DEALER_DISCARD) or replay.actor != s:
            break
        for c in sample.discards[s]:
            assert c in replay.legal_actions(), f"seat {s} may not discard {c} in the sampled world"
            replay.apply(c)
        if replay.phase == DISCARD and replay.actor == s and obs["discard_counts"][s] is not None:
            replay.apply("done")
    for c in sequence:
        assert c in replay.legal_actions(), f"{c} is not a legal play in the sampled world"
        replay.apply(c)
    return replay


def check_sample(sample, view, real):
    seat = view.seat
    assert isinstance(sample, SchmierState)
    assert sample.observe(seat) == view.state
    if real is not None:
        assert sample.to_act() == real.to_act()
        if real.to_act() == seat:
            assert sample.legal_actions() == real.legal_actions()
    # Card multiset: every card once, in a hand, a discard pile, the stock or a trick.
    _, sequence = played_by(view.state)
    everything = [c for h in sample.hands for c in h] + [c for d in sample.discards for c in d]
    everything += sample.stock + sequence
    assert sorted(everything) == sorted(CARDS)
    t = sample.trump
    if t >= 0 and sample.phase in (PLAY, OVER):
        trumps = {c for c in CARDS if EFFECTIVE[t][c] == t}
        for s in range(NUM_SEATS):
            if s != sample.dealer:
                assert not trumps & set(sample.discards[s])  # SC-5.1
        assert not PROTECTED[t] & set(sample.discards[sample.dealer])  # SC-5.2
        assert len(sample.discards[sample.dealer]) == view.state["discard_counts"][sample.dealer]
    if sample.phase != OVER:  # a finished game has scored its last deal: nothing to replay
        replay = replay_oracle(sample, view)
        assert replay.observe(seat) == view.state
        assert replay.hands == sample.hands
        assert [sorted(d) for d in replay.discards] == [sorted(d) for d in sample.discards]
        assert sorted(replay.stock) == sorted(sample.stock)


@pytest.mark.parametrize("block", range(4))
def test_sc_5_sc_6_every_sample_replays_the_deal_legally_and_observes_as_the_view(block):
    """SC-5.1 (non-trump discards), SC-5.2 (the dealer's discards), SC-6.1 (voids): ≥ 2,500
    checked samples per block, 10,000+ over the four blocks, every seat and every phase."""
    checked = 0
    phases = collections.Counter()
    for seed in range(block * 100, block * 100 + 100):
        state, _ = SPEC.new_game(seed)
        rng = random.Random(seed)
        sampler = random.Random(-seed)
        while state.to_act() is not None:
            if rng.random() < 0.07:
                seat = rng.randrange(NUM_SEATS)
                view = view_of(state, seat)
                check_sample(SPEC.determinize(view, sampler), view, state)
                checked += 1
                phases[view.state["phase"]] += 1
            state.apply(rng.choice(state.legal_actions()))
        view = view_of(state, 2)
        sample = SPEC.determinize(view, sampler)
        check_sample(sample, view, state)
        assert sample.outcome() == state.outcome()
        if checked >= 2_600:
            break
    assert checked >= 2_500
    assert set(phases) == {"bid", "trump", "discard", "dealer_discard", "play"}


def test_samples_can_be_played_on_to_the_end_of_the_game():
    state, _ = SPEC.new_game(5)
    rng = random.Random(5)
    for _ in range(120):
        state.apply(rng.choice(state.legal_actions()))
    sample = SPEC.determinize(view_of(state, state.to_act()), random.Random(2))
    while sample.to_act() is not None:
        sample.apply(rng.choice(sample.legal_actions()))
    assert sample.outcome() is not None


def test_the_hidden_cards_vary_between_samples_and_are_not_the_real_ones():
    state, _ = SPEC.new_game(8)
    seat = state.to_act()
    view = view_of(state, seat)
    rng = random.Random(0)
    left = (seat + 1) % NUM_SEATS
    samples = [SPEC.determinize(view, rng) for _ in range(400)]
    hands = [tuple(s.hands[left]) for s in samples]
    assert len(set(hands)) == 400
    assert tuple(state.hands[left]) not in hands
    counts = collections.Counter(c for h in hands for c in h)
    unseen = [c for c in CARDS if c not in state.hands[seat]]
    for c in unseen:  # 6 of 47 unseen cards: about 51 of 400
        assert 20 < counts[c] < 90, (c, counts[c])
    stocks = {tuple(s.stock) for s in samples}
    assert len(stocks) == 400 and tuple(state.stock) not in stocks  # the stock order is random too


def test_the_future_is_not_the_real_one():
    state, _ = SPEC.new_game(21)
    view = view_of(state, state.to_act())
    nexts = set()
    for k in range(15):
        sample = SPEC.determinize(view, random.Random(k))
        deal = sample.deal
        while sample.deal == deal and sample.to_act() is not None:
            sample.apply(sample.legal_actions()[-1])
        nexts.add(tuple(sample.hands[0]))
    real = state.clone()
    deal = real.deal
    while real.deal == deal and real.to_act() is not None:
        real.apply(real.legal_actions()[-1])
    assert len(nexts) == 15 and tuple(real.hands[0]) not in nexts


def test_equal_views_give_identical_samples_whatever_the_real_state():
    """Leak test: a twin real state (another sample: other hidden cards, other stock, other
    future) with the same observation gives the same sample stream for the same seed."""
    rng = random.Random(3)
    compared = 0
    for seed in range(40):
        state, _ = SPEC.new_game(seed)
        for _ in range(rng.randrange(1, 150)):
            if state.to_act() is None:
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.to_act() is None:
            continue
        seat = rng.randrange(NUM_SEATS)
        twin = SPEC.determinize(view_of(state, seat), random.Random(seed))
        assert twin.observe(seat) == state.observe(seat)
        assert twin.hands != state.hands
        ra, rb = random.Random(7), random.Random(7)
        for _ in range(5):
            sa = SPEC.determinize(view_of(state, seat), ra)
            sb = SPEC.determinize(view_of(twin, seat), rb)
            assert (sa.hands, sa.discards, sa.stock) == (sb.hands, sb.discards, sb.stock)
            assert sa._rng.getstate() == sb._rng.getstate()
        compared += 1
    assert compared >= 30


# --- constraints, one rule at a time -----------------------------------------


def exchange_done(seed=3):
    """A random game run until the play of a deal has begun."""
    state, _ = SPEC.new_game(seed)
    rng = random.Random(seed)
    while state.phase != PLAY:
        state.apply(rng.choice(state.legal_actions()))
    return state


def test_sc_5_1_and_5_2_no_sample_puts_a_trump_among_non_dealers_discards_or_a_protected_one_anywhere():
    for seed in range(20):
        state = exchange_done(seed)
        seat = (state.dealer + 1) % NUM_SEATS
        view = view_of(state, seat)
        t = state.trump
        trumps = {c for c in CARDS if EFFECTIVE[t][c] == t}
        rng = random.Random(seed)
        for _ in range(25):
            sample = SPEC.determinize(view, rng)
            for s in range(NUM_SEATS):
                assert not PROTECTED[t] & set(sample.discards[s])
                if s != sample.dealer:
                    assert not trumps & set(sample.discards[s])


def test_sc_5_2_the_dealer_discards_a_trump_only_keeping_six_trumps():
    seen_trump_discard = 0
    for seed in range(40):
        state = exchange_done(seed)
        d = state.dealer
        seat = (d + 1) % NUM_SEATS
        view = view_of(state, seat)
        t = state.trump
        trumps = {c for c in CARDS if EFFECTIVE[t][c] == t}
        rng = random.Random(seed)
        for _ in range(20):
            sample = SPEC.determinize(view, rng)
            if trumps & set(sample.discards[d]):
                seen_trump_discard += 1
                assert set(sample.hands[d]) <= trumps
    assert seen_trump_discard > 0  # the case is reachable, and then the dealer keeps six trumps


def test_sc_6_1_a_seat_that_did_not_follow_is_void_in_the_suit_led():
    found = 0
    for seed in range(200):
        state = exchange_done(seed)
        rng = random.Random(seed)
        t = state.trump
        while state.phase == PLAY and not state.tricks:
            state.apply(rng.choice(state.legal_actions()))
        if state.phase != PLAY:
            continue
        leader, cards, _ = state.tricks[0]
        led = EFFECTIVE[t][cards[0]]
        voids = [(leader + i) % NUM_SEATS for i, c in enumerate(cards) if EFFECTIVE[t][c] != led]
        if not voids:
            continue
        seat = next(s for s in range(NUM_SEATS) if s not in voids)
        view = view_of(state, seat)
        for _ in range(30):
            sample = SPEC.determinize(view, rng)
            for s in voids:
                assert not [c for c in sample.hands[s] if EFFECTIVE[t][c] == led]
        found += 1
        if found >= 15:
            break
    assert found >= 15


# --- bad input ----------------------------------------------------------------


def corrupted_views():
    state = exchange_done(4)
    rng = random.Random(4)
    while not state.tricks:
        state.apply(rng.choice(state.legal_actions()))
    seat = (state.dealer + 1) % NUM_SEATS
    good = state.observe(seat)
    played = good["tricks"][0]["cards"][0]
    views = {}

    def edit(name, **fields):
        views[name] = View(seat, OPTIONS, {**good, **fields})

    edit("a card in the hand was also played", hand=[*good["hand"][:-1], played] if played not in good["hand"]
         else good["hand"])
    edit("a card twice in the hand", hand=[good["hand"][0]] * len(good["hand"]))
    edit("too many cards in the hand", hand=[c for c in CARDS if c not in good["hand"]][:30])
    edit("a trump among my discards", my_discards=["JK"] * max(1, len(good["my_discards"])))
    edit("more draws than the stock holds", draw_counts=[17] * NUM_SEATS, discard_counts=[17] * NUM_SEATS)
    edit("a hand that is not a list", hand="AS KS")
    edit("a card that is no card", hand=["ZZ", *good["hand"][1:]])
    edit("an unknown phase", phase="shuffle")
    edit("a trick with a wrong winner", tricks=[{**good["tricks"][0], "winner": (good["tricks"][0]["winner"] + 1) % 6}])
    edit("a bid below the last", bids=[{"seat": (state.dealer + 1) % 6, "bid": "4"},
                                       {"seat": (state.dealer + 2) % 6, "bid": "3"}])
    views["garbage state"] = View(seat, OPTIONS, {"seat": seat})
    views["seat out of range"] = View(9, OPTIONS, good)
    views["bad options"] = View(seat, {"max_deals": "x"}, good)
    return views


def void_contradicted_view():
    """A seat shows void in the led suit in one trick, then plays that suit later."""
    for seed in range(300):
        state = exchange_done(seed)
        rng = random.Random(seed)
        t = state.trump
        while state.phase == PLAY and len(state.tricks) < 2:
            state.apply(rng.choice(state.legal_actions()))
        if state.phase != PLAY:
            continue
        leader, cards, _ = state.tricks[0]
        led = EFFECTIVE[t][cards[0]]
        for i, c in enumerate(cards):
            s = (leader + i) % NUM_SEATS
            if EFFECTIVE[t][c] == led:
                continue
            # Seat s was void in `led`; make it play a card of `led` in the second trick.
            leader2, cards2, _ = state.tricks[1]
            j = (s - leader2) % NUM_SEATS
            viewer = next(v for v in range(NUM_SEATS) if v != s)
            obs = state.observe(viewer)
            unseen = [x for x in CARDS if EFFECTIVE[t][x] == led and x not in obs["hand"]
                      and all(x not in tr["cards"] for tr in obs["tricks"])]
            if not unseen or j == 0:
                continue
            cards2 = list(cards2)
            cards2[j] = unseen[0]
            tricks = [obs["tricks"][0], {**obs["tricks"][1], "cards": cards2}, *obs["tricks"][2:]]
            return View(viewer, OPTIONS, {**obs, "tricks": tricks})
    raise AssertionError("no position found")


def test_views_no_state_fits_raise_inconsistent_view():
    for view in [*corrupted_views().values(), void_contradicted_view()]:
        with pytest.raises(InconsistentView):
            SPEC.determinize(view, random.Random(0))


def test_views_no_state_fits_are_refused_in_a_subprocess_without_hanging():
    views = [void_contradicted_view(), *corrupted_views().values()]
    lines = determinize_in_subprocess("schmier", views)
    assert len(lines) == len(views)
    assert all(line.startswith("InconsistentView ") for line in lines), lines


def test_random_corruptions_give_a_consistent_sample_or_inconsistent_view():
    rng = random.Random(11)
    outcomes = collections.Counter()
    for seed in range(80):
        state, _ = SPEC.new_game(seed)
        for _ in range(rng.randrange(5, 120)):
            if state.to_act() is None:
                break
            state.apply(rng.choice(state.legal_actions()))
        seat = rng.randrange(NUM_SEATS)
        obs = state.observe(seat)
        if not obs["hand"]:
            continue
        hand = obs["hand"][:]
        hand[rng.randrange(len(hand))] = rng.choice(CARDS)
        view = View(seat, OPTIONS, {**obs, "hand": hand})
        try:
            sample = SPEC.determinize(view, random.Random(seed))
        except InconsistentView:
            outcomes["refused"] += 1
            continue
        outcomes["sampled"] += 1
        check_sample(sample, view, None)  # the real state does not hold this hand
    assert outcomes["refused"] > 10 and outcomes["sampled"] > 0, outcomes
