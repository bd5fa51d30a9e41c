"""Back Alley determinizer (issue #23): samples agree with everything the seat saw.

The main property test checks each sample with an oracle that shares no code
with the sampler: it rebuilds the deal from the sample's hidden hands plus the
cards each seat has played, replays every bid and card of the deal through the
engine (``from_deal`` + ``apply``, so each play must be legal under BA-8.1 …
BA-8.3 in the sampled world) and asks that the replayed state equal the
sample and observe exactly as the view.
"""

from __future__ import annotations

import collections
import random

import pytest

from referee.games import InconsistentView, View
from referee.games.back_alley import SPEC, BackAlleyState
from referee.games.back_alley.notation import DECK, JOKERS
from referee.games.back_alley.rules import _ORDER_KEY

from .determinize_helpers import determinize_in_subprocess

OPTIONS = SPEC.normalize_options({})


def view_of(state, seat):
    return View(seat, OPTIONS, state.observe(seat))


def replay_oracle(sample: BackAlleyState, view: View) -> BackAlleyState:
    """The deal rebuilt from the sample's hands and replayed from its first bid."""
    obs = view.state
    tricks = [t["cards"] for t in obs["past_tricks"]] + ([obs["trick"]["cards"]] if obs["trick"] else [])
    leaders = [t["leader"] for t in obs["past_tricks"]] + ([obs["trick"]["leader"]] if obs["trick"] else [])
    dealt = [list(h) for h in sample._hands]
    for ld, cards in zip(leaders, tricks, strict=True):
        for i, c in enumerate(cards):
            dealt[(ld + i) % 4].append(c)
    stock = [obs["turn_up"]]
    if obs["joker_discard"] is not None:
        d, joker = obs["joker_discard"]["seat"], obs["joker_discard"]["card"]
        drawn = dealt[d].pop()  # any card of its hand may have been the draw
        dealt[d].append(joker)
        stock.append(drawn)
    used = {c for h in dealt for c in h} | set(stock)
    stock += [c for c in DECK if c not in used]
    replay, _ = BackAlleyState.from_deal(
        dealer=obs["dealer"], hands=dealt, stock=stock, deal=obs["deal"], scores=obs["scores"],
        redeals=obs["redeals"], options=OPTIONS,
    )
    for i in range(4):
        bid = obs["bids"][(obs["dealer"] + 1 + i) % 4]
        if bid is not None:
            replay.apply(bid)
    for cards in tricks:
        for c in cards:
            assert c in replay.legal_actions(), f"{c} is not a legal play in the sampled world"
            replay.apply(c)
    return replay


def check_sample(sample, view, real):
    seat = view.seat
    assert isinstance(sample, BackAlleyState)
    assert sample.observe(seat) == view.state
    assert sample.to_act() == real.to_act()
    if real.to_act() == seat:
        assert sample.legal_actions() == real.legal_actions()
    # Card multiset: hands + seen cards are the deck without repeats; sizes are the real ones.
    assert [len(h) for h in sample._hands] == [len(h) for h in real._hands]
    held = [c for h in sample._hands for c in h]
    seen = [c for t in view.state["past_tricks"] for c in t["cards"]] + [view.state["turn_up"]]
    if view.state["trick"]:
        seen += view.state["trick"]["cards"]
    if view.state["joker_discard"]:
        seen.append(view.state["joker_discard"]["card"])
    assert len(set(held + seen)) == len(held + seen)
    assert set(held + seen) <= set(DECK)
    if sample._trump is None:  # BA-3.2: no joker in a hand in a no-trump deal
        assert not set(held) & set(JOKERS)
    if sample._phase != 2:
        replay = replay_oracle(sample, view)
        assert replay.observe(seat) == view.state
        assert [sorted(h) for h in replay._hands] == [sorted(h) for h in sample._hands]


@pytest.mark.parametrize("block", range(4))
def test_ba_8_every_sample_replays_the_deal_legally_and_observes_as_the_view(block):
    """BA-8.1 (voids), BA-8.2 (trump leads), BA-8.3 (joker leads), BA-3 (turn-up and joker discard):
    ≥ 2,500 checked samples per block, 10,000+ over the four blocks."""
    checked = 0
    for seed in range(block * 100, block * 100 + 100):
        state, _ = SPEC.new_game(seed)
        rng = random.Random(seed)
        sampler = random.Random(-seed)
        while state.to_act() is not None:
            if rng.random() < 0.14:
                seat = rng.randrange(4)
                view = view_of(state, seat)
                check_sample(SPEC.determinize(view, sampler), view, state)
                checked += 1
            state.apply(rng.choice(state.legal_actions()))
        if checked >= 2_600:
            break
    # The finished game is a view too.
    view = view_of(state, 1)
    check_sample(SPEC.determinize(view, sampler), view, state)
    assert checked >= 2_500


def test_samples_can_be_played_to_the_end_of_the_game():
    state, _ = SPEC.new_game(5)
    rng = random.Random(5)
    for _ in range(300):
        state.apply(rng.choice(state.legal_actions()))
    sample = SPEC.determinize(view_of(state, state.to_act()), random.Random(2))
    while sample.to_act() is not None:
        sample.apply(rng.choice(sample.legal_actions()))
    assert sample.outcome() is not None


def test_the_hidden_cards_vary_between_samples_and_are_not_the_real_ones():
    state, _ = SPEC.new_game(8)  # deal 1: 13 cards each, 12 unseen stock-side cards + 39 in other hands
    seat = state.to_act()
    view = view_of(state, seat)
    rng = random.Random(0)
    left = (seat + 1) % 4
    hands = [tuple(SPEC.determinize(view, rng)._hands[left]) for _ in range(400)]
    assert len(set(hands)) == 400
    assert sum(sorted(h) == sorted(state._hands[left]) for h in hands) == 0
    # Each unseen card lands in the left opponent's hand about 13/40 of the time.
    counts = collections.Counter(c for h in hands for c in h)
    unseen = [c for c in DECK if c not in state._hands[seat] and c != view.state["turn_up"]]
    assert set(counts) <= set(unseen)
    for c in unseen:
        assert 70 < counts[c] < 190, (c, counts[c])


def test_the_future_is_not_the_real_one():
    """Later deals in a sample are shuffled from the sampler's generator, not the real seed."""
    state, _ = SPEC.new_game(21)
    view = view_of(state, state.to_act())
    first_hands = set()
    for k in range(20):
        sample = SPEC.determinize(view, random.Random(k))
        while sample.observe(0)["deal"] == 1:
            sample.apply(sample.legal_actions()[-1])  # board, then any card: the deal is played
        first_hands.add(tuple(sample.observe(0)["hand"]))
    real = state.clone()
    while real.observe(0)["deal"] == 1:
        real.apply(real.legal_actions()[-1])
    assert len(first_hands) == 20
    assert tuple(real.observe(0)["hand"]) not in first_hands


def test_equal_views_give_identical_samples_whatever_the_real_state():
    """Leak test: two real states with the same observation for a seat (their hidden hands and
    future shuffles differ) give the same sample stream for the same sampler seed."""
    rng = random.Random(3)
    compared = 0
    for seed in range(40):
        state, _ = SPEC.new_game(seed)
        for _ in range(rng.randrange(1, 400)):
            if state.to_act() is None:
                break
            state.apply(rng.choice(state.legal_actions()))
        if state.to_act() is None:
            continue
        seat = rng.randrange(4)
        twin = SPEC.determinize(view_of(state, seat), random.Random(seed))  # another real world
        assert twin.observe(seat) == state.observe(seat)
        assert [sorted(h) for h in twin._hands] != [sorted(h) for h in state._hands] or not any(
            state._hands[s] for s in range(4) if s != seat
        )
        ra, rb = random.Random(7), random.Random(7)
        for _ in range(5):
            sa = SPEC.determinize(view_of(state, seat), ra)
            sb = SPEC.determinize(view_of(twin, seat), rb)
            assert sa._hands == sb._hands
            assert sa._rng.getstate() == sb._rng.getstate()
        compared += 1
    assert compared >= 30


def test_equal_bidding_views_from_different_deals_and_seeds_give_identical_samples():
    mine = [r + "S" for r in "AKQJT98765432"]
    states = []
    for seed in (1, 2):
        rest = [c for c in DECK if c not in mine and c != "2H"]
        random.Random(seed).shuffle(rest)
        state, _ = BackAlleyState.from_deal(dealer=3, hands=[mine, rest[0:13], rest[13:26], rest[26:39]],
                                            stock=["2H", *rest[39:]], seed=seed)
        states.append(state)
    a, b = states
    assert a.observe(0) == b.observe(0) and a._hands != b._hands
    sa = SPEC.determinize(view_of(a, 0), random.Random(4))
    sb = SPEC.determinize(view_of(b, 0), random.Random(4))
    assert sa._hands == sb._hands and sa._rng.getstate() == sb._rng.getstate()


# --- constraints, one rule at a time (constructed deals) ----------------------


def three_card_deal(hands, turn_up, bids, plays):
    state, _ = BackAlleyState.from_deal(dealer=3, hands=[h.split() for h in hands],
                                        stock=[turn_up], deal=11)
    for a in bids.split() + plays.split():
        state.apply(a)
    return state


def test_ba_8_1_a_seat_that_did_not_follow_suit_is_void_in_it():
    # Trump spades.  Seat 0 leads KH, seat 1 discards 5D: seat 1 holds no heart.
    state = three_card_deal(["AS KH 3D", "QC 5D 7C", "2H 9D 8C", "3H TD 9C"], "2S", "1 pass pass pass", "KH 5D")
    view = view_of(state, 0)
    rng = random.Random(0)
    hearts_elsewhere = 0
    for _ in range(300):
        sample = SPEC.determinize(view, rng)
        assert not [c for c in sample._hands[1] if c[1] == "H"]
        hearts_elsewhere += any(c[1] == "H" for c in sample._hands[2] + sample._hands[3])
    assert hearts_elsewhere > 100  # hearts are unseen and do reach the other hands


def test_ba_8_2_a_trump_led_before_trumps_broke_shows_a_hand_of_trumps_only():
    # Trump spades.  Seat 0 (no board) leads 2S in the first trick: its hand was all trumps.
    state = three_card_deal(["AS KS 2S", "QC 5D 7C", "2H 9D 8C", "3H TD 9C"], "3S", "1 pass pass pass", "2S")
    view = view_of(state, 1)
    rng = random.Random(0)
    hands0 = set()
    for _ in range(300):
        sample = SPEC.determinize(view, rng)
        assert all(c[1] == "S" or c in JOKERS for c in sample._hands[0])
        hands0.add(tuple(sample._hands[0]))
    assert len(hands0) > 20  # seat 0's two cards are unknown trumps, not its real ones

def test_ba_8_3_after_the_big_joker_is_led_a_follower_holds_no_higher_trump():
    # Trump spades; seat 0 bid board and leads BJ; seat 1 must play its highest trump, 9S.
    state = three_card_deal(["BJ KS 2H", "9S 5S 7C", "2D 9D 8C", "3H TD 9C"], "3S", "board pass pass pass", "BJ 9S")
    view = view_of(state, 0)
    rng = random.Random(0)
    high = {"LJ", "AS", "QS", "JS", "TS"}
    reached_others = 0
    for _ in range(300):
        sample = SPEC.determinize(view, rng)
        assert not high & set(sample._hands[1])
        reached_others += bool(high & set(sample._hands[2] + sample._hands[3]))
    assert reached_others > 100


def test_ba_3_2_no_hand_holds_a_joker_in_a_no_trump_deal():
    state, _ = BackAlleyState.from_deal(
        dealer=3, hands=[h.split() for h in ["AS KH 3D", "QC 5D 7C", "2H 9D 8C", "3H TD 9C"]],
        stock=["BJ", "4C", "LJ"], deal=11,
    )
    view = view_of(state, 0)
    rng = random.Random(0)
    for _ in range(300):
        assert not set(JOKERS) & {c for h in SPEC.determinize(view, rng)._hands for c in h}


# --- bad input ----------------------------------------------------------------


def corrupted_views():
    state, _ = SPEC.new_game(4)
    rng = random.Random(4)
    while not (state.observe(0)["past_tricks"] and state.observe(0)["trick"]["cards"]):
        state.apply(rng.choice(state.legal_actions()))
    good = state.observe(0)
    played = good["past_tricks"][0]["cards"][0]
    views = {}

    def edit(name, **fields):
        views[name] = View(0, OPTIONS, {**good, **fields})

    edit("a card in the hand was also played", hand=[*good["hand"][:-1], played])
    edit("a card twice in the hand", hand=[good["hand"][0]] * len(good["hand"]))
    edit("too many cards in the hand", hand=[c for c in DECK if c not in good["hand"]][:40])
    edit("the turn-up is in the hand", turn_up=good["hand"][0])
    edit("a hand that is not a list", hand="AS KS")
    edit("a card that is no card", hand=["ZZ", *good["hand"][1:]])
    edit("an unknown phase", phase="shuffle")
    edit("a deal out of range", deal=26)
    edit("a trick with a wrong winner", past_tricks=[{**good["past_tricks"][0], "winner": 9}])
    views["garbage state"] = View(0, OPTIONS, {"seat": 0})
    views["not a mapping"] = View(0, OPTIONS, [])  # type: ignore[arg-type]
    views["seat out of range"] = View(7, OPTIONS, good)
    views["no options"] = View(0, {}, good)
    return views


def void_contradicted_view():
    """Seat 1 shows void in hearts in trick 1, then plays a heart in trick 2."""
    state = three_card_deal(["AS KH 3H", "QC 5D 7C", "2H 9D 8C", "4H TD 9C"], "2S", "1 pass pass pass",
                            "KH 5D 2H 4H 3H QC")
    obs = state.observe(0)
    trick = obs["trick"]
    bad = {**obs, "trick": {**trick, "cards": [trick["cards"][0], "JH"]}}
    return View(0, OPTIONS, bad)


def overfull_suit_view():
    """Seats 1-3 show void in spades at the first trick of a 13-card deal, but seat 0's hand
    leaves ten spades unseen, and the stock holds one card: each spade fits somewhere alone,
    no deal fits them all (the matching step must say so)."""
    spades = [r + "S" for r in "AKQJT98765432"]
    others = [c for c in DECK if c[1] != "S" and c != "2H"]
    hands = [spades, others[0:13], others[13:26], others[26:39]]
    stock = ["2H", *[c for c in DECK if c not in {x for h in hands for x in h} and c != "2H"]]
    state, _ = BackAlleyState.from_deal(dealer=3, hands=hands, stock=stock, deal=1)
    state.apply("board")
    for _ in range(3):
        state.apply("pass")
    state.apply("AS")
    for _ in range(3):
        state.apply(state.legal_actions()[0])
    obs = state.observe(0)
    swapped = state._hands[1][:10]  # cards seat 1 holds, put into seat 0's hand instead of ten spades
    hand = [c for c in obs["hand"] if c not in spades[1:11]] + swapped
    return View(0, OPTIONS, {**obs, "hand": sorted(hand, key=_ORDER_KEY)})


def test_views_no_state_fits_raise_inconsistent_view():
    for name, view in {**corrupted_views(), "void contradicted": void_contradicted_view(),
                       "too many of a suit unseen": overfull_suit_view()}.items():
        with pytest.raises(InconsistentView):
            SPEC.determinize(view, random.Random(0))
        assert name


def test_views_no_state_fits_are_refused_in_a_subprocess_without_hanging():
    views = [void_contradicted_view(), overfull_suit_view(), *corrupted_views().values()]
    views = [v for v in views if isinstance(v.state, dict)]
    lines = determinize_in_subprocess("back-alley", views)
    assert len(lines) == len(views)
    assert all(line.startswith("InconsistentView ") for line in lines), lines


def test_overfull_suit_is_caught_by_the_matching_not_by_a_single_card():
    view = overfull_suit_view()
    with pytest.raises(InconsistentView, match="no deal of the unseen cards"):
        SPEC.determinize(view, random.Random(0))


def test_random_corruptions_give_a_consistent_sample_or_inconsistent_view():
    """Fuzz: swap a card of the hand with another card; the sampler either finds a world
    that replays legally and observes as the view, or says InconsistentView."""
    rng = random.Random(11)
    outcomes = collections.Counter()
    for seed in range(60):
        state, _ = SPEC.new_game(seed)
        for _ in range(rng.randrange(5, 200)):
            state.apply(rng.choice(state.legal_actions()))
        seat = rng.randrange(4)
        obs = state.observe(seat)
        if not obs["hand"]:
            continue
        hand = obs["hand"][:]
        hand[rng.randrange(len(hand))] = rng.choice(DECK)
        view = View(seat, OPTIONS, {**obs, "hand": hand})
        try:
            sample = SPEC.determinize(view, random.Random(seed))
        except InconsistentView:
            outcomes["refused"] += 1
            continue
        outcomes["sampled"] += 1
        assert sample.observe(seat) == view.state
        if sample._phase != 2:
            assert replay_oracle(sample, view).observe(seat) == view.state
    assert outcomes["refused"] > 10 and outcomes["sampled"] > 0, outcomes
