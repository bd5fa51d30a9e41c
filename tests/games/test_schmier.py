"""Schmier rules (RULES.md §0 and §2): one or more tests per rule id.

Constructed deals come from ``SchmierState.from_deal`` (the real bidding and
exchange) or ``SchmierState.from_play`` (a position at the first lead).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from referee.games import GAMES, IllegalAction, InvalidAction, InvalidOptions
from referee.games.cards import STANDARD_DECK, randbelow, shuffle
from referee.games.schmier import SPEC, SchmierState
from referee.games.schmier.notation import CARDS, Action
from referee.games.schmier.rules import EFFECTIVE, trick_winner

HEARTS = ["AH", "KH", "QH", "JH", "JD", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H", "JK"]


# --- helpers ---------------------------------------------------------------


def deal_with(dealer, hands, stock_top=(), fill=None, **kw):
    """A constructed deal: ``hands`` (seat -> some cards) and the top of the
    stock as given; every other card filled in ``fill`` order (default: deck order)."""
    used = {c for h in hands.values() for c in h} | set(stock_top)
    rest = [c for c in (fill or CARDS) if c not in used]
    rest += [c for c in CARDS if c not in used and c not in rest]
    full = []
    for s in range(6):
        h = list(hands.get(s, []))
        while len(h) < 6:
            h.append(rest.pop(0))
        full.append(h)
    state, events = SchmierState.from_deal(dealer, full, list(stock_top) + rest, **kw)
    return state, events


def bid_to(state, declarer, bid):
    """Everyone passes except ``declarer``, who bids ``bid``."""
    while state.decision() == "bid":
        state.apply(str(bid) if state.to_act() == declarer else "pass")


def play_tricks(state, tricks):
    """Play ``tricks`` (a list of {seat: card}) in the order the engine asks."""
    events = []
    for trick in tricks:
        for _ in range(6):
            seat = state.to_act()
            card = trick[seat]
            assert card in state.legal_actions(), (seat, card, state.legal_actions())
            events += state.apply(card)
    return events


def non_trumps(trump_suit, cards):
    t = "CDHS".index(trump_suit)
    return [c for c in cards if EFFECTIVE[t][c] != t]


def by_type(events, kind):
    return [e for e in events if e.data["type"] == kind]


# A full deal, trump hearts, dealer 5, declarer seat 0.  All 15 trumps are
# played, so ``from_deal`` with every seat saying "done" reaches it exactly.
def points_script(bid_tc="TC"):
    return [
        {0: "AH", 1: "2H", 2: "KH", 3: "3H", 4: "4H", 5: "5H"},  # s0 wins (A)
        {0: "6H", 1: "QH", 2: "JH", 3: "8H", 4: "7H", 5: "JK"},  # s1 wins (Q over Right)
        {1: "9H", 2: "2C", 3: "JD", 4: "3C", 5: "TH", 0: "AS"},  # s3 wins (Left over T)
        {3: "AC", 4: "KC", 5: bid_tc, 0: "4C", 1: "5C", 2: "6C"},  # s3 wins
        {3: "2D", 4: "AD", 5: "3D", 0: "4D", 1: "TD", 2: "5D"},  # s4 wins
        {4: "2S", 5: "3S", 0: "4S", 1: "KS", 2: "TS", 3: "5S"},  # s1 wins
    ]


def scripted_deal(script, bid=3, declarer=0, scores=(0, 0, 0), **kw):
    """Bid, name hearts, exchange nothing, and reach the first lead of ``script``."""
    hands = {s: [t[s] for t in script] for s in range(6)}
    state, _ = deal_with(5, {s: hands[s] for s in range(5)}, fill=hands[5], scores=scores, **kw)
    bid_to(state, declarer, bid)
    state.apply("H")
    for _ in range(5):
        state.apply("done")
    keep = set(hands[5])
    while state.decision() == "dealer_discard":
        state.apply(next(c for c in state.legal_actions() if c not in keep))
    assert sorted(state.hands[5]) == sorted(hands[5])
    return state


# --- §0 conventions ----------------------------------------------------------


def test_0_1_bidding_and_play_go_clockwise_from_the_dealers_left():
    state, _ = SPEC.new_game(11)
    d = state.dealer
    order = []
    for _ in range(6):
        order.append(state.to_act())
        state.apply("pass")
    assert order == [(d + 1 + i) % 6 for i in range(6)]
    state = scripted_deal(points_script())
    order = []
    for _ in range(6):
        order.append(state.to_act())
        state.apply(points_script()[0][state.to_act()])
    assert order == [0, 1, 2, 3, 4, 5]


def test_0_2_teams_are_seat_mod_3():
    state, _ = SPEC.new_game(1)
    assert [state.team_of(s) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    assert [SPEC.team_of(s, {}) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    assert SPEC.num_seats({}) == 6 and SPEC.num_teams({}) == 3


def test_0_3_cards_use_the_shared_notation_with_one_joker():
    assert set(CARDS) == set(STANDARD_DECK) | {"JK"}
    state, events = SPEC.new_game(2)
    dealt = [c for e in by_type(events, "hand") for c in e.data["cards"]]
    assert all(c in CARDS for c in dealt)


def test_every_kind_of_action_text_is_offered_for_its_decision():
    kinds = {"bid": {"pass", "bid"}, "trump": {"trump"}, "discard": {"card", "done"},
             "dealer_discard": {"card"}, "play": {"card"}}
    seen = set()
    for seed in range(3):
        state, _ = SPEC.new_game(seed, {"max_deals": 4})
        rng = random.Random(seed)
        while state.to_act() is not None:
            legal = state.legal_actions()
            for a in legal:
                kind = Action.from_text(a).kind
                assert kind in kinds[state.decision()]
                seen.add(kind)
            state.apply(rng.choice(legal))
    assert seen == {"pass", "bid", "trump", "card", "done"}


@pytest.mark.parametrize("text", ["", "x", "pas", "PASS", "1S", "ZZ", "BJ", "LJ", "04", "AS ", " 3", "३", None, 3])
def test_text_that_is_no_schmier_action_does_not_parse(text):
    with pytest.raises(InvalidAction):
        Action.from_text(text)


def test_parsed_forms():
    assert Action.from_text("pass") == Action("pass")
    assert Action.from_text("5") == Action("bid", 5)
    assert Action.from_text("7") == Action("bid", 7)  # well formed, never legal
    assert Action.from_text("H") == Action("trump", "H")
    assert Action.from_text("JK") == Action("card", "JK")
    assert Action.from_text("done") == Action("done")


def test_0_4_first_dealer_is_uniform_and_comes_from_the_seed():
    dealers = Counter(SPEC.new_game(seed)[0].dealer for seed in range(600))
    assert set(dealers) == set(range(6))
    assert all(60 <= n <= 140 for n in dealers.values()), dealers
    a, ea = SPEC.new_game(77)
    b, eb = SPEC.new_game(77)
    assert a.dealer == b.dealer and [e.data for e in ea] == [e.data for e in eb]
    assert a.dealer == randbelow(random.Random(77), 6)


def test_0_4_the_dealer_moves_left_after_a_played_deal():
    state = scripted_deal(points_script())
    events = play_tricks(state, points_script())
    deal = by_type(events, "deal")
    assert deal and deal[0].data["dealer"] == 0 and state.dealer == 0
    assert state.deal == 2 and state.to_act() == 1


def test_0_5_cards_are_dealt_one_at_a_time_from_the_dealers_left():
    seed = 1234
    state, _ = SPEC.new_game(seed)
    rng = random.Random(seed)
    dealer = randbelow(rng, 6)
    deck = list(CARDS)
    shuffle(deck, rng)
    for i in range(36):
        seat = (dealer + 1 + i) % 6
        assert deck[i] in state.hands[seat]
    # the rest is the stock, top card first (drawn first)
    assert state.stock[::-1] == deck[36:]


def _visible_cards(state, seat):
    seen = set(state.hands[seat]) | set(state.discards[seat]) | set(state.trick)
    for _, cards, _ in state.tricks:
        seen |= set(cards)
    return seen


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _strings(v)


def test_0_6_observations_show_only_what_the_seat_may_know():
    card_set = set(CARDS)
    for seed in range(4):
        state, _ = SPEC.new_game(seed)
        rng = random.Random(seed)
        steps = 0
        while state.to_act() is not None and steps < 400:
            for seat in range(6):
                obs = state.observe(seat)
                assert obs["seat"] == seat
                assert obs["hand"] == state.hands[seat]
                shown = {s for s in _strings(obs) if s in card_set}
                assert shown <= _visible_cards(state, seat), (seat, shown - _visible_cards(state, seat))
                assert obs["my_discards"] == state.discards[seat]
            state.apply(rng.choice(state.legal_actions()))
            steps += 1


def test_0_6_private_events_go_only_to_their_seat_and_public_ones_hide_cards():
    for seed in range(6):
        state, events = SPEC.new_game(seed)
        rng = random.Random(seed)
        played = set()
        log = list(events)
        while state.to_act() is not None and len(log) < 3000:
            log += state.apply(rng.choice(state.legal_actions()))
        for e in log:
            kind = e.data["type"]
            if kind in ("hand", "discard", "drawn"):
                assert e.to == (e.data["seat"],)
            else:
                assert e.to is None
                if kind == "play":
                    played.add(e.data["card"])
                cards = {s for s in _strings(e.data) if s in CARDS}
                assert cards <= played, (kind, cards - played)
            if kind == "deal":
                played = set()


def test_0_6_the_dealer_does_not_see_what_the_others_draw():
    state, _ = deal_with(5, {}, stock_top=["AS", "KS", "QS"])
    bid_to(state, 0, 3)
    state.apply("D")
    state.apply(non_trumps("D", state.hands[0])[0])
    events = state.apply("done")
    drawn = by_type(events, "drawn")
    assert drawn[0].to == (0,) and drawn[0].data["cards"] == ["AS"]
    assert "AS" not in {s for s in _strings(state.observe(5))}
    assert state.observe(3)["discard_counts"][0] == 1 and state.observe(3)["draw_counts"][0] == 1


def test_0_7_ten_consecutive_all_pass_deals_abort_the_game():
    state, _ = SPEC.new_game(3)
    events = []
    for _ in range(10):
        for _ in range(6):
            events += state.apply("pass")
    out = state.outcome()
    assert out is not None and out.status == "aborted" and out.winners == ()
    assert out.reason == "max_redeals" and out.scores == (0, 0, 0)
    assert state.to_act() is None and state.legal_actions() == []
    assert events[-1].data["type"] == "game_over" and events[-1].data["status"] == "aborted"
    with pytest.raises(IllegalAction):
        state.apply("pass")


def test_0_7_a_played_deal_resets_the_all_pass_count():
    state, _ = deal_with(5, {}, redeals=9)  # nine all-pass deals already
    bid_to(state, 0, 3)
    assert state.redeals == 0 and state.played == 1
    state2, _ = SPEC.new_game(4, {"max_redeals": 2})
    for _ in range(6):
        state2.apply("pass")
    assert state2.outcome() is None and state2.redeals == 1
    bid_to(state2, (state2.dealer + 1) % 6, 4)
    assert state2.redeals == 0


def test_0_7_max_deals_ends_the_game_with_the_highest_score_winning():
    # The script gives T0 3 and T1 3 points; T1 starts ahead.
    state = scripted_deal(points_script(), scores=(5, 6, 0), options={"max_deals": 1})
    events = play_tricks(state, points_script())
    out = state.outcome()
    assert out.status == "win" and out.winners == (1,) and out.reason == "max_deals"
    assert out.scores == (8, 9, 0)
    assert events[-1].data["type"] == "game_over"


def test_0_7_max_deals_with_equal_highest_scores_is_a_draw_even_for_the_declarer():
    state = scripted_deal(points_script(), scores=(6, 6, 0), options={"max_deals": 1})
    play_tricks(state, points_script())
    out = state.outcome()
    assert out.status == "draw" and out.winners == () and out.detail["tied"] == [0, 1]
    assert out.reason == "max_deals"


def test_0_7_max_deals_counts_only_played_deals():
    state, _ = SPEC.new_game(8, {"max_deals": 1})
    for _ in range(6):
        state.apply("pass")  # an all-pass deal does not count
    assert state.played == 0 and state.outcome() is None


def test_0_7_at_max_deals_a_team_at_21_is_judged_by_sc_9():
    # T0 (the declarer's team) and T1 tie at 23: SC-9 gives it to the declarer.
    state = scripted_deal(points_script(), scores=(20, 20, 0), options={"max_deals": 1})
    play_tricks(state, points_script())
    out = state.outcome()
    assert out.status == "win" and out.winners == (0,) and out.reason == "target_reached"


def test_0_7_options_are_validated():
    assert SPEC.normalize_options({}) == {"max_redeals": 10, "max_deals": 200}
    assert SPEC.normalize_options(None) == {"max_redeals": 10, "max_deals": 200}
    assert SPEC.normalize_options({"max_deals": 5})["max_deals"] == 5
    for bad in ({"max_deal": 3}, {"max_deals": 0}, {"max_redeals": "3"}, {"max_redeals": True}):
        with pytest.raises(InvalidOptions):
            SPEC.normalize_options(bad)
    assert GAMES["schmier"] is SPEC and SPEC.title == "Schmier" and SPEC.rules_version == "2"


# --- SC-1, SC-2 deck and deal --------------------------------------------------


def test_SC_1_the_deck_is_52_cards_and_one_joker():
    state, _ = SPEC.new_game(5)
    everything = [c for h in state.hands for c in h] + state.stock
    assert len(everything) == 53 and set(everything) == set(CARDS)


def test_SC_2_six_cards_each_and_a_stock_of_17():
    state, events = SPEC.new_game(6)
    assert [len(h) for h in state.hands] == [6] * 6 and len(state.stock) == 17
    hands = by_type(events, "hand")
    assert [e.to for e in hands] == [(s,) for s in range(6)]
    assert events[0].data == {"type": "deal", "deal": 1, "dealer": state.dealer, "scores": [0, 0, 0]}


# --- SC-3 bidding ------------------------------------------------------------


def test_SC_3_bids_must_beat_every_earlier_bid():
    state, _ = deal_with(5, {})
    assert state.decision() == "bid" and state.to_act() == 0
    assert state.legal_actions() == ["pass", "3", "4", "5", "6"]
    state.apply("4")
    assert state.legal_actions() == ["pass", "5", "6"]
    for bad in ("4", "3", "2", "7", "0"):
        with pytest.raises(IllegalAction):
            state.apply(bad)
    for bad in ("four", "04", "", "5 ", "AH"):
        with pytest.raises((InvalidAction, IllegalAction)):
            state.apply(bad)
    with pytest.raises(InvalidAction):
        state.apply("four")
    state.apply("pass")
    assert state.legal_actions() == ["pass", "5", "6"]  # a pass does not lower the bar


def test_SC_3_each_seat_bids_once_ending_with_the_dealer_and_the_highest_bidder_declares():
    state, events = deal_with(2, {})
    seen = []
    for action in ["3", "pass", "5", "pass", "pass", "pass"]:
        seen.append(state.to_act())
        events = state.apply(action)
    assert seen == [3, 4, 5, 0, 1, 2]
    assert state.decision() == "trump" and state.to_act() == 5
    assert state.declarer == 5 and state.high == 5
    assert by_type(events, "contract")[0].data == {"type": "contract", "declarer": 5, "bid": 5}


def test_SC_3_bidding_stops_at_once_on_a_six():
    state, _ = deal_with(0, {})
    state.apply("3")
    events = state.apply("6")
    assert state.decision() == "trump" and state.to_act() == 2
    assert [b for _, b in state.bids] == [3, 6] and len(by_type(events, "contract")) == 1


def test_SC_3_1_all_pass_means_the_same_dealer_deals_again():
    state, _ = SPEC.new_game(21)
    dealer, hands = state.dealer, [list(h) for h in state.hands]
    events = []
    for _ in range(6):
        events += state.apply("pass")
    assert by_type(events, "redeal")[0].data == {"type": "redeal", "deal": 1, "dealer": dealer, "redeals": 1}
    assert by_type(events, "deal")[0].data["dealer"] == dealer == state.dealer
    assert state.deal == 2 and state.played == 0 and state.bids == []
    assert state.to_act() == (dealer + 1) % 6 and state.hands != hands  # reshuffled


# --- SC-4 trump ----------------------------------------------------------------


def test_SC_4_the_declarer_names_the_trump_suit():
    state, _ = deal_with(5, {})
    bid_to(state, 3, 4)
    assert state.decision() == "trump" and state.to_act() == 3
    assert state.legal_actions() == ["C", "D", "H", "S"]
    with pytest.raises(IllegalAction):
        state.apply("pass")
    with pytest.raises(InvalidAction):
        state.apply("X")
    events = state.apply("S")
    assert events[0].data == {"type": "trump", "seat": 3, "trump": "S"}
    assert state.observe(0)["trump"] == "S" and state.decision() == "discard"


@pytest.mark.parametrize(
    "trump,left", [("C", "JS"), ("S", "JC"), ("D", "JH"), ("H", "JD")]
)
def test_SC_4_1_trumps_are_the_suit_the_left_bauer_and_the_joker(trump, left):
    t = "CDHS".index(trump)
    trumps = {c for c in CARDS if EFFECTIVE[t][c] == t}
    assert trumps == {r + trump for r in "23456789TJQKA"} | {left, "JK"}
    assert len(trumps) == 15


def test_SC_4_1_the_left_bauer_does_not_follow_its_printed_suit():
    # Trump hearts; diamonds led; seat 1 holds JD and clubs only: JD is no diamond.
    hands = [
        ["5D", "2C", "3C", "4C", "5C", "6C"],
        ["JD", "7C", "8C", "9C", "TC", "JC"],
        ["6D", "QC", "KC", "AC", "2S", "3S"],
        ["7D", "4S", "5S", "6S", "7S", "8S"],
        ["8D", "9S", "TS", "JS", "QS", "KS"],
        ["9D", "AS", "TD", "QD", "KD", "AD"],
    ]
    state, _ = SchmierState.from_play(5, hands, "H", 0, 3)
    state.apply("5D")
    assert state.legal_actions() == sorted(hands[1], key=CARDS.index)  # void: any card
    # and when trump is led, JD must follow as a trump
    hands2 = [list(h) for h in hands]
    hands2[0][0], hands2[5][2] = "2H", "5D"
    state, _ = SchmierState.from_play(5, hands2, "H", 0, 3)
    state.apply("2H")
    assert state.legal_actions() == ["JD"]


def test_SC_4_2_trump_ranking():
    order = ["AH", "KH", "QH", "JH", "JD", "TH", "9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H", "JK"]
    t = "CDHS".index("H")
    for i, high in enumerate(order):
        for low in order[i + 1 :]:
            assert trick_winner([low, high, "2C", "3C", "4C", "5C"], t) == 1
            assert trick_winner([high, low, "2C", "3C", "4C", "5C"], t) == 0
    # the joker is the lowest trump but still beats every non-trump
    assert trick_winner(["AC", "KC", "JK", "QC", "TC", "9C"], t) == 2
    # spades trump: Left Bauer is JC, the Right JS
    s = "CDHS".index("S")
    assert trick_winner(["TS", "JC", "JS", "QS", "2S", "JK"], s) == 3
    assert trick_winner(["TS", "JC", "JS", "9S", "2S", "JK"], s) == 2


def test_SC_4_3_other_suits_rank_ace_high_without_the_left_bauer():
    t = "CDHS".index("H")
    order = ["AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C", "6C", "5C", "4C", "3C", "2C"]
    for i, high in enumerate(order):
        for low in order[i + 1 :]:
            assert trick_winner([low, high, "2S", "3S", "4S", "5S"], t) == 1
    # diamonds led with hearts trump: JD is a trump (wins), not a diamond jack
    assert trick_winner(["AD", "JD", "KD", "QD", "TD", "9D"], t) == 1
    # spades trump: the JC is gone from clubs, so QC beats TC and nothing else changes
    s = "CDHS".index("S")
    assert EFFECTIVE[s]["JC"] == s and trick_winner(["TC", "QC", "2D"], s) == 1


# --- SC-5 discard and draw -----------------------------------------------------


def test_SC_5_1_non_dealers_discard_up_to_three_non_trumps_in_turn():
    stock = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S"]
    state, _ = deal_with(
        2,
        {3: ["2H", "3H", "4C", "5C", "6C", "JK"], 4: ["AH", "JD", "4D", "5D", "6D", "7D"]},
        stock_top=stock,
    )
    bid_to(state, 3, 3)
    state.apply("H")
    assert state.decision() == "discard" and state.to_act() == 3  # dealer's left first
    assert state.legal_actions() == ["4C", "5C", "6C", "done"]  # no trump (JK, 2H, 3H)
    with pytest.raises(IllegalAction):
        state.apply("2H")
    with pytest.raises(IllegalAction):
        state.apply("JK")
    e1 = state.apply("5C")
    assert e1[0].data == {"type": "discard", "seat": 3, "card": "5C"} and e1[0].to == (3,)
    assert state.to_act() == 3 and state.legal_actions() == ["4C", "6C", "done"]
    state.apply("4C")
    events = state.apply("6C")  # the third card ends the turn
    assert state.to_act() == 4
    assert by_type(events, "draw")[0].data == {"type": "draw", "seat": 3, "count": 3}
    assert by_type(events, "draw")[0].to is None
    assert by_type(events, "drawn")[0].data["cards"] == ["AS", "KS", "QS"]
    assert set(state.hands[3]) == {"2H", "3H", "JK", "AS", "KS", "QS"}
    # seat 4: JD is the Left Bauer, a trump: not discardable
    assert state.legal_actions() == ["4D", "5D", "6D", "7D", "done"]
    state.apply("7D")
    events = state.apply("done")
    assert by_type(events, "draw")[0].data["count"] == 1
    assert by_type(events, "drawn")[0].data["cards"] == ["JS"]
    assert state.discards[4] == ["7D"] and "JS" in state.hands[4]
    order = [4]
    while state.decision() == "discard":
        order.append(state.to_act())
        state.apply("done")
    assert order == [4, 5, 0, 1]  # ... and ending right of the dealer (seat 1)
    assert state.decision() == "dealer_discard" and state.to_act() == 2
    assert state.observe(0)["discard_counts"] == [0, 0, None, 3, 1, 0]
    assert state.observe(0)["draw_counts"] == [0, 0, 13, 3, 1, 0]


def test_SC_5_1_done_at_once_draws_nothing():
    state, _ = deal_with(5, {})
    bid_to(state, 0, 3)
    state.apply("D")
    hand = list(state.hands[0])
    events = state.apply("done")
    assert state.hands[0] == hand and state.to_act() == 1
    assert [e.data["type"] for e in events] == ["draw"]


def test_SC_5_1_a_hand_of_trumps_can_only_say_done():
    state, _ = deal_with(5, {0: ["AH", "KH", "QH", "JH", "JD", "JK"]})
    bid_to(state, 0, 3)
    state.apply("H")
    assert state.legal_actions() == ["done"]


def _dealer_with(trumps_in_pool, dealer_hand_extra=()):
    """Dealer 5 ends with ``trumps_in_pool`` (and the rest non-trumps) after all say done."""
    other_trumps = [c for c in HEARTS if c not in trumps_in_pool]
    fill_nontrump = [c for c in CARDS if c not in HEARTS]
    hands = {}
    pool = list(other_trumps) + [c for c in fill_nontrump if c not in dealer_hand_extra]
    for s in range(5):
        hands[s] = pool[6 * s : 6 * s + 6]
    state, _ = deal_with(5, hands, fill=list(trumps_in_pool) + list(dealer_hand_extra))
    bid_to(state, 0, 3)
    state.apply("H")
    for _ in range(5):
        state.apply("done")
    return state


def test_SC_5_2_dealer_with_few_trumps_discards_only_non_trumps():
    state = _dealer_with(["AH", "3H", "JD", "JK"])
    assert state.decision() == "dealer_discard" and state.to_act() == 5
    assert len(state.hands[5]) == 23
    legal = state.legal_actions()
    assert len(legal) == 19 and not set(legal) & set(HEARTS)
    assert "done" not in legal
    with pytest.raises(IllegalAction):
        state.apply("3H")
    while state.decision() == "dealer_discard":
        state.apply(state.legal_actions()[0])
    assert set(["AH", "3H", "JD", "JK"]) <= set(state.hands[5]) and len(state.hands[5]) == 6
    assert state.decision() == "play" and state.to_act() == 0
    assert state.observe(1)["discard_counts"][5] == 17


def test_SC_5_2_dealer_with_more_than_six_trumps_discards_exactly_the_excess():
    pool = ["AH", "2H", "JH", "JD", "JK", "KH", "QH", "TH", "9H"]  # T = 9
    state = _dealer_with(pool)
    legal = state.legal_actions()
    assert {"KH", "QH", "TH", "9H"} <= set(legal)
    assert not {"AH", "2H", "JH", "JD", "JK"} & set(legal)  # protected
    for c in ["KH", "9H", "QH"]:  # three trump discards: the quota
        state.apply(c)
    assert not set(state.legal_actions()) & set(HEARTS)
    with pytest.raises(IllegalAction):
        state.apply("TH")
    while state.decision() == "dealer_discard":
        state.apply(state.legal_actions()[0])
    assert sorted(state.hands[5]) == sorted(["AH", "2H", "JH", "JD", "JK", "TH"])


def test_SC_5_2_after_the_non_trumps_only_unprotected_trumps_remain():
    pool = ["AH", "2H", "JH", "JD", "JK", "KH", "QH", "TH", "9H", "8H"]  # T = 10
    state = _dealer_with(pool)
    while any(c not in HEARTS for c in state.legal_actions()):
        state.apply(next(c for c in state.legal_actions() if c not in HEARTS))
    assert len(state.hands[5]) == 10
    assert state.legal_actions() == ["8H", "9H", "TH", "QH", "KH"]
    for _ in range(4):
        state.apply(state.legal_actions()[-1])
    assert state.decision() == "play"
    assert sorted(state.hands[5]) == sorted(["AH", "2H", "JH", "JD", "JK", "8H"])


def test_SC_5_2_exactly_six_trumps_keeps_them_all():
    pool = ["AH", "KH", "QH", "TH", "9H", "8H"]
    state = _dealer_with(pool)
    assert not set(state.legal_actions()) & set(HEARTS)
    while state.decision() == "dealer_discard":
        state.apply(state.legal_actions()[-1])
    assert sorted(state.hands[5]) == sorted(pool)


def test_SC_5_2_the_dealer_sees_the_stock_it_takes_and_no_one_else_does():
    state, _ = deal_with(5, {})
    bid_to(state, 0, 3)
    state.apply("C")
    for _ in range(4):
        state.apply("done")
    stock = list(reversed(state.stock))
    events = state.apply("done")
    drawn = [e for e in by_type(events, "drawn") if e.data["seat"] == 5]
    assert drawn[0].to == (5,) and drawn[0].data["cards"] == stock
    assert [e.data for e in by_type(events, "draw")][-1] == {"type": "draw", "seat": 5, "count": 17}


# --- SC-6 play -------------------------------------------------------------------


def test_SC_6_the_declarer_leads_and_the_trick_winner_leads_next():
    state = scripted_deal(points_script(), declarer=0)
    assert state.decision() == "play" and state.to_act() == 0
    script = points_script()
    play_tricks(state, script[:1])
    assert state.to_act() == 0  # s0 won with AH
    events = play_tricks(state, script[1:2])
    assert by_type(events, "trick")[0].data == {
        "type": "trick", "n": 2, "leader": 0, "cards": ["6H", "QH", "JH", "8H", "7H", "JK"],
        "winner": 1, "team": 1,
    }
    assert state.to_act() == 1


def test_SC_6_the_declarer_leads_even_when_not_left_of_the_dealer():
    hands = [[c for c in CARDS if c not in HEARTS][6 * s : 6 * s + 6] for s in range(6)]
    state, _ = SchmierState.from_play(1, hands, "H", 4, 5)
    assert state.to_act() == 4 and state.legal_actions() == hands[4]


def test_SC_6_six_tricks_are_played_then_the_deal_is_scored():
    state = scripted_deal(points_script())
    events = play_tricks(state, points_script())
    assert len(by_type(events, "trick")) == 6 and len(by_type(events, "deal_score")) == 1


def test_SC_6_1_followers_must_follow_the_suit_led():
    hands = [
        ["2C", "AS", "KS", "QS", "JS", "TS"],
        ["9C", "3C", "AD", "KD", "QD", "2H"],
        ["9S", "8S", "7S", "6S", "5S", "4S"],
        ["JK", "AC", "3S", "2S", "KC", "QC"],
        ["JD", "TC", "4C", "5C", "6C", "7C"],
        ["8C", "JC", "3D", "4D", "5D", "6D"],
    ]
    state, _ = SchmierState.from_play(5, hands, "H", 0, 3)
    state.apply("2C")
    assert state.legal_actions() == ["3C", "9C"]
    with pytest.raises(IllegalAction):
        state.apply("2H")  # a trump while holding clubs
    state.apply("9C")
    assert state.legal_actions() == hands[2][::-1]  # void in clubs: anything
    state.apply("4S")
    assert state.legal_actions() == ["QC", "KC", "AC"]  # JK is a trump, not a club


def test_SC_6_1_a_led_joker_or_left_bauer_means_trump_was_led():
    hands = [
        ["JK", "JD", "AS", "KS", "QS", "2S"],
        ["2H", "3C", "AD", "KD", "QD", "3S"],
        ["9S", "8S", "7S", "6S", "5S", "4S"],
        ["TS", "AC", "JS", "2D", "KC", "QC"],
        ["AH", "TC", "4C", "5C", "6C", "7C"],
        ["8C", "JC", "3D", "4D", "5D", "6D"],
    ]
    state, _ = SchmierState.from_play(5, hands, "H", 0, 3)
    state.apply("JK")
    assert state.legal_actions() == ["2H"]
    state.apply("2H")
    assert state.legal_actions() == hands[2][::-1]
    state2, _ = SchmierState.from_play(5, hands, "H", 0, 3)
    state2.apply("JD")
    assert state2.legal_actions() == ["2H"]


def test_SC_6_2_the_highest_trump_wins_otherwise_the_highest_of_the_led_suit():
    hands = [
        ["2C", "AS", "KS", "QS", "JS", "TS"],
        ["AC", "3C", "AD", "KD", "QD", "2H"],
        ["9S", "8S", "7S", "6S", "5S", "4S"],
        ["JK", "KC", "3S", "2S", "AH", "QC"],
        ["JD", "TC", "4C", "5C", "6C", "7C"],
        ["8C", "JC", "3D", "4D", "5D", "6D"],
    ]
    # no trump played: the ace of the led suit wins, the off-suit ace of spades not
    state, _ = SchmierState.from_play(5, hands, "H", 0, 3)
    events = play_tricks(state, [{0: "2C", 1: "AC", 2: "9S", 3: "KC", 4: "TC", 5: "8C"}])
    assert by_type(events, "trick")[0].data["winner"] == 1
    # a lone JK (the lowest trump) beats the ace of the led suit
    hands = [
        ["AD", "2C", "3C", "4C", "5C", "6C"],
        ["JK", "7C", "8C", "9C", "TC", "QC"],
        ["KD", "KC", "AC", "2S", "3S", "4S"],
        ["QD", "5S", "6S", "7S", "8S", "9S"],
        ["TD", "TS", "JS", "QS", "KS", "AS"],
        ["9D", "2H", "3H", "4H", "5H", "6H"],
    ]
    state, _ = SchmierState.from_play(5, hands, "H", 0, 3)
    events = play_tricks(state, [{0: "AD", 1: "JK", 2: "KD", 3: "QD", 4: "TD", 5: "9D"}])
    assert by_type(events, "trick")[0].data["winner"] == 1


# --- SC-7 points ---------------------------------------------------------------------


def test_SC_7_each_point_goes_where_the_rules_say():
    state = scripted_deal(points_script())
    events = play_tricks(state, points_script())
    score = by_type(events, "deal_score")[0].data
    assert score["points"] == {"high": 0, "low": 1, "right": 1, "left": 0, "joker": 1, "game": 0}
    assert score["counts"] == [39, 31, 0]
    assert score["won"] == [3, 3, 0]


def test_SC_7_1_high_goes_to_the_player_who_plays_the_ace_at_once():
    state = scripted_deal(points_script())
    play_tricks(state, [{0: "AH", 1: "2H", 2: "KH", 3: "3H", 4: "4H", 5: "5H"}][:1])
    assert state.observe(2)["points"]["high"] == 0


def test_SC_7_2_low_goes_to_the_player_of_the_two_even_in_a_lost_trick():
    state = scripted_deal(points_script())
    state.apply("AH")
    state.apply("2H")  # seat 1 (team 1) plays the 2; seat 0 will win the trick
    assert state.observe(4)["points"]["low"] == 1
    play_tricks_partial = {2: "KH", 3: "3H", 4: "4H", 5: "5H"}
    for _ in range(4):
        state.apply(play_tricks_partial[state.to_act()])
    assert state.tricks[0][2] == 0 and state.points[1] == 1


def test_SC_7_3_and_7_5_right_bauer_and_joker_go_to_the_trick_winner():
    state = scripted_deal(points_script())
    play_tricks(state, points_script()[:2])
    # JH was played by seat 2 (T2), JK by seat 5 (T2); seat 1 (T1) won the trick
    pts = state.observe(0)["points"]
    assert pts["right"] == 1 and pts["joker"] == 1 and pts["left"] is None


def test_SC_7_4_left_bauer_goes_to_the_trick_winner():
    state = scripted_deal(points_script())
    play_tricks(state, points_script()[:3])
    assert state.observe(0)["points"]["left"] == 0  # JD won by seat 3 (T0)


def test_SC_7_6_game_goes_to_the_strictly_highest_card_count():
    state = scripted_deal(points_script())
    play_tricks(state, points_script()[:5])
    assert state.observe(0)["counts"] == [39, 18, 0]
    assert state.observe(0)["points"]["game"] is None  # decided at the end of the deal


def test_SC_7_6_a_tie_for_the_highest_count_gives_the_game_point_to_nobody():
    script = points_script(bid_tc="QC")  # T0's count drops from 39 to 31 = T1's
    state = scripted_deal(script)
    events = play_tricks(state, script)
    score = by_type(events, "deal_score")[0].data
    assert score["counts"] == [31, 31, 0] and score["points"]["game"] is None
    assert score["won"] == [2, 3, 0]


def test_SC_7_6_card_values():
    from referee.games.schmier.rules import GAME_VALUE

    assert {r: GAME_VALUE[r + "S"] for r in "AKQJT98765432"} == {
        "A": 4, "K": 3, "Q": 2, "J": 1, "T": 10, "9": 0, "8": 0, "7": 0, "6": 0,
        "5": 0, "4": 0, "3": 0, "2": 0,
    }
    assert GAME_VALUE["JK"] == 1 and sum(GAME_VALUE.values()) == 4 * 20 + 1


# --- SC-8 scoring ----------------------------------------------------------------------


def test_SC_8_declarer_who_makes_the_bid_adds_the_points_won():
    state = scripted_deal(points_script(), bid=3)
    events = play_tricks(state, points_script())
    score = by_type(events, "deal_score")[0].data
    assert score["made"] is True and score["delta"] == [3, 3, 0] and score["scores"] == [3, 3, 0]
    assert state.scores == [3, 3, 0]


def test_SC_8_a_set_declarer_subtracts_the_bid_and_may_go_negative():
    state = scripted_deal(points_script(), bid=4)
    events = play_tricks(state, points_script())
    score = by_type(events, "deal_score")[0].data
    assert score["made"] is False and score["delta"] == [-4, 3, 0]
    assert state.scores == [-4, 3, 0] and state.outcome() is None


def test_SC_8_other_teams_add_what_they_won_even_when_the_declarer_is_set():
    script = points_script(bid_tc="QC")
    state = scripted_deal(script, bid=3, scores=(1, 2, 3))
    events = play_tricks(state, script)
    score = by_type(events, "deal_score")[0].data
    assert score["delta"] == [-3, 3, 0] and state.scores == [-2, 5, 3]


# --- SC-9 end ------------------------------------------------------------------------


def test_SC_9_reaching_21_ends_the_game_and_the_highest_wins():
    state = scripted_deal(points_script(), scores=(10, 19, 5))
    events = play_tricks(state, points_script())
    out = state.outcome()
    assert out.status == "win" and out.winners == (1,) and out.scores == (13, 22, 5)
    assert out.reason == "target_reached" and state.to_act() is None
    assert events[-1].data == {"type": "game_over", **out.to_json()}


def test_SC_9_the_highest_wins_even_if_another_team_also_passed_21():
    state = scripted_deal(points_script(), scores=(18, 25, 5))
    play_tricks(state, points_script())
    assert state.outcome().winners == (1,)


def test_SC_9_below_21_the_game_goes_on():
    state = scripted_deal(points_script(), scores=(17, 17, 20))
    play_tricks(state, points_script())
    assert state.outcome() is None and state.scores == [20, 20, 20] and state.decision() == "bid"


def test_SC_9_a_tie_including_the_declarers_team_goes_to_the_declarer():
    state = scripted_deal(points_script(), scores=(19, 19, 0))
    play_tricks(state, points_script())
    out = state.outcome()
    assert out.status == "win" and out.winners == (0,) and out.scores == (22, 22, 0)
    assert out.detail == {"tied": [0, 1], "tie_break": "declarer"}


def test_SC_9_a_tie_without_the_declarers_team_is_a_draw_between_the_tied():
    state = scripted_deal(points_script(), bid=4, scores=(0, 19, 22))
    play_tricks(state, points_script())
    out = state.outcome()
    assert out.status == "draw" and out.winners == () and out.scores == (-4, 22, 22)
    assert out.detail == {"tied": [1, 2]} and out.reason == "target_reached"


def test_SC_9_a_set_declarer_can_lose_to_a_team_it_passed():
    state = scripted_deal(points_script(), bid=4, scores=(24, 19, 0))
    play_tricks(state, points_script())
    out = state.outcome()
    assert out.scores == (20, 22, 0) and out.winners == (1,)


# --- contract details ----------------------------------------------------------------


def test_clone_carries_the_seeded_generator_so_both_copies_deal_alike():
    state, _ = SPEC.new_game(31)
    copy = state.clone()
    a = [e.data for _ in range(6) for e in state.apply("pass")]
    b = [e.data for _ in range(6) for e in copy.apply("pass")]
    assert a == b and state.hands == copy.hands
    copy.apply(copy.legal_actions()[1])
    assert state.bids == [] and copy.bids != []


def test_refused_actions_leave_the_state_alone():
    state = _dealer_with(["AH", "2H", "JH", "JD", "JK", "KH", "QH", "TH", "9H"])
    before = (state.legal_actions(), [list(h) for h in state.hands], state.observe(5))
    for bad in ("AH", "done", "pass", "7", "H", "XX", "", None):
        with pytest.raises((IllegalAction, InvalidAction)):
            state.apply(bad)
    assert (state.legal_actions(), [list(h) for h in state.hands], state.observe(5)) == before
    with pytest.raises(InvalidAction):
        state.apply(None)
    with pytest.raises(IllegalAction):
        state.apply("done")


def test_from_deal_and_from_play_refuse_impossible_deals():
    hands = [[c for c in CARDS][6 * s : 6 * s + 6] for s in range(6)]
    with pytest.raises(ValueError):
        SchmierState.from_deal(0, hands, list(CARDS[36:52]))  # 16-card stock
    with pytest.raises(ValueError):
        SchmierState.from_deal(6, hands, list(CARDS[36:]))
    with pytest.raises(ValueError):
        SchmierState.from_play(0, hands[:5] + [hands[0]], "H", 0, 3)  # repeated cards
    with pytest.raises(ValueError):
        SchmierState.from_play(0, hands, "H", 0, 2)


def test_0_4_later_deals_continue_the_one_seeded_generator():
    seed = 77
    state, _ = SPEC.new_game(seed)
    rng = random.Random(seed)
    dealer = randbelow(rng, 6)
    for _ in range(2):  # the first deal, then the same dealer's redeal (SC-3.1)
        deck = list(CARDS)
        shuffle(deck, rng)
        for i in range(36):
            assert deck[i] in state.hands[(dealer + 1 + i) % 6]
        assert state.stock[::-1] == deck[36:]
        for _ in range(6):
            state.apply("pass")
    assert state.deal == 3


def test_the_kept_legal_list_is_the_one_the_rules_give_at_every_step():
    for seed in range(12):
        state, _ = SPEC.new_game(seed, {"max_deals": 8})
        rng = random.Random(seed)
        while state.to_act() is not None:
            legal = state.legal_actions()
            assert legal == state._compute_legal()
            legal.append("junk")  # the caller's copy: changing it changes nothing
            legal.clear()
            legal = state.legal_actions()
            assert legal and "junk" not in legal
            if rng.random() < 0.05:
                assert state.clone().legal_actions() == legal
            state.apply(rng.choice(legal))
        assert state.legal_actions() == []
