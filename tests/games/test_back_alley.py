"""Back Alley: one or more known-answer tests per rule of RULES.md §1 (and §0).

Constructed deals use ``BackAlleyState.from_deal``; with ``dealer=3`` seat 0
bids first.  A hand of ``h`` cards is deal ``14 - h`` (BA-2).
"""

from __future__ import annotations

import collections
import itertools
import json
import random
import re

import pytest

from referee.games import IllegalAction, InvalidAction, InvalidOptions
from referee.games.back_alley import SPEC, BackAlleyState
from referee.games.back_alley.notation import DECK, Action, Bid, Play
from referee.games.back_alley.rules import deal_score, hand_size
from referee.games.cards import randbelow, shuffle


def deal(hands, turn_up, *, dealer=3, stock=(), **kw):
    cards = [h.split() for h in hands]
    k = kw.pop("deal", 14 - len(cards[0]))
    state, events = BackAlleyState.from_deal(
        dealer=dealer, hands=cards, stock=[turn_up, *stock], deal=k, **kw
    )
    return state, events


def act(state, actions):
    events = []
    for a in actions.split():
        events.extend(state.apply(a))
    return [e.data for e in events]


def of_type(events, kind):
    return [e for e in events if e["type"] == kind]


def random_game(seed, options=None, choice_seed=None, until=None):
    state, events = SPEC.new_game(seed, options)
    rng = random.Random(seed if choice_seed is None else choice_seed)
    log = [e.data for e in events]
    while state.to_act() is not None and (until is None or not until(state)):
        log.extend(e.data for e in state.apply(rng.choice(state.legal_actions())))
    return state, log


# Standard three-card deal, trump spades (turn-up 2S), seat 0 bids first.
#   seat 0: AS KH 3D   seat 1: QH 5D 7C   seat 2: 2H 9D 8C   seat 3: 3H TD 9C
THREE = ["AS KH 3D", "QH 5D 7C", "2H 9D 8C", "3H TD 9C"]


# --- §0 ---------------------------------------------------------------------


def test_0_4_first_dealer_is_drawn_uniformly_from_the_seed():
    counts = collections.Counter(SPEC.new_game(seed)[0].observe(0)["dealer"] for seed in range(800))
    assert set(counts) == {0, 1, 2, 3}
    assert min(counts.values()) > 150


def test_0_4_same_seed_same_deal_other_seed_other_deal():
    a = [e.data for e in SPEC.new_game(11)[1]]
    b = [e.data for e in SPEC.new_game(11)[1]]
    c = [e.data for e in SPEC.new_game(12)[1]]
    assert a == b
    assert a != c


def test_0_4_dealer_moves_left_every_deal():
    _, log = random_game(3)
    dealers = [e["dealer"] for e in of_type(log, "deal")]
    assert len(dealers) >= 25
    assert all(b == (a + 1) % 4 for a, b in itertools.pairwise(dealers))


def test_0_5_cards_are_dealt_one_at_a_time_from_the_dealers_left():
    seed = 2024
    rng = random.Random(seed)
    dealer = randbelow(rng, 4)
    deck = list(DECK)
    shuffle(deck, rng)
    state, events = SPEC.new_game(seed)
    hands = {e.data["seat"]: e.data["cards"] for e in events if e.data["type"] == "hand"}
    for j in range(4):
        seat = (dealer + 1 + j) % 4
        assert sorted(hands[seat]) == sorted(deck[j:52:4])
    assert of_type([e.data for e in events], "deal")[0]["turn_up"] == deck[52]


_CARD = re.compile(r'"([2-9TJQKA][CDHS]|BJ|LJ)"')


def _cards_in(obj):
    return set(_CARD.findall(json.dumps(obj)))


def test_0_6_observation_shows_own_hand_and_public_cards_only():
    state, log = random_game(5, until=lambda s: s.decision() == "play" and s.observe(0)["deal"] == 2)
    for _ in range(7):  # into the middle of a trick
        state.apply(state.legal_actions()[0])
    for seat in range(4):
        obs = state.observe(seat)
        public = {obs["turn_up"]}
        for t in obs["past_tricks"]:
            public.update(t["cards"])
        public.update(obs["trick"]["cards"])
        assert _cards_in(obs) <= public | set(obs["hand"])
        for other in range(4):
            if other != seat:
                assert not set(state.observe(other)["hand"]) & _cards_in(obs)


def test_0_6_hands_and_draws_are_private_events_and_public_events_hide_them():
    state, events = deal(
        ["AS KH 3D", "QH 5D 7C", "2H 9D LJ", "3H TD 9C"], "BJ", stock=["4C", "6C"]
    )
    seen_public: set[str] = {"BJ", "LJ"}  # the turn-up and the face-up discard
    assert {e.data["type"] for e in events} >= {"hand", "draw", "drawn"}
    for e in events:
        if e.data["type"] in ("hand", "drawn"):
            assert e.to == (e.data["seat"],)
        else:
            assert e.to is None
            assert _cards_in(e.data) <= seen_public
    assert "4C" not in _cards_in(state.observe(0)) | _cards_in(state.observe(1))
    assert "6C" not in json.dumps([state.observe(s) for s in range(4)])  # the stock order


def test_0_6_public_events_during_play_carry_only_played_cards():
    state, log = random_game(8, until=lambda s: s.observe(0)["deal"] == 3)
    played = set()
    for e in log:
        if e["type"] == "play":
            played.add(e["card"])
        if e["type"] in ("hand", "drawn"):
            continue
        if e["type"] == "deal":
            played.add(e["turn_up"])
        if e["type"] == "joker_discard":
            played.add(e["card"])
        assert _cards_in(e) <= played


def _all_pass(state):
    return act(state, "pass pass pass pass")


def test_0_7_consecutive_all_pass_deals_abort_at_max_redeals():
    state, _ = SPEC.new_game(1, {"max_redeals": 3})
    dealer = state.observe(0)["dealer"]
    _all_pass(state)
    _all_pass(state)
    assert state.outcome() is None
    log = _all_pass(state)
    out = state.outcome()
    assert out.status == "aborted" and out.winners == () and out.reason == "max_redeals"
    assert out.scores == (0, 0)
    assert state.to_act() is None and state.legal_actions() == []
    assert log[-1] == {"type": "game_over", "status": "aborted", "winners": [], "scores": [0, 0],
                       "reason": "max_redeals", "detail": {"deal": 1, "redeals": 3}}
    assert log[-1] == {"type": "game_over", **out.to_json()}
    assert state.observe(0)["dealer"] == (dealer + 2) % 4


def test_0_7_default_guard_is_ten_and_one_aborts_at_once():
    state, _ = SPEC.new_game(1)
    for _ in range(9):
        _all_pass(state)
    assert state.outcome() is None
    _all_pass(state)
    assert state.outcome().reason == "max_redeals"
    state, _ = SPEC.new_game(1, {"max_redeals": 1})
    _all_pass(state)
    assert state.outcome().status == "aborted"


def test_0_7_a_played_deal_resets_the_count():
    state, _ = SPEC.new_game(2, {"max_redeals": 2})
    _all_pass(state)
    assert state.observe(0)["redeals"] == 1
    act(state, "1 pass pass pass")
    assert state.observe(0)["redeals"] == 0
    rng = random.Random(0)
    while state.decision() == "play":
        state.apply(rng.choice(state.legal_actions()))
    assert state.observe(0)["deal"] == 2
    _all_pass(state)
    assert state.outcome() is None
    _all_pass(state)
    assert state.outcome().status == "aborted"


def test_options_defaults_and_refusals():
    assert SPEC.normalize_options({}) == {"max_redeals": 10}
    assert SPEC.normalize_options(None) == {"max_redeals": 10}
    assert SPEC.normalize_options({"max_redeals": 4}) == {"max_redeals": 4}
    for bad in ({"max_redeals": 0}, {"max_redeals": "3"}, {"max_redeals": True},
                {"max_redeals": 2.0}, {"players": 4}):
        with pytest.raises(InvalidOptions):
            SPEC.normalize_options(bad)
    assert SPEC.num_seats({}) == 4 and SPEC.num_teams({}) == 2
    assert [SPEC.team_of(s, {}) for s in range(4)] == [0, 1, 0, 1]
    state, _ = SPEC.new_game(0, None)
    assert [state.team_of(s) for s in range(4)] == [0, 1, 0, 1]


def test_action_text_parses_to_bids_and_plays():
    assert Action.from_text("7") == Bid(7) and Action.from_text("board") == Bid("board")
    assert Action.from_text("pass") == Bid("pass") and Action.from_text("LJ") == Play("LJ")
    assert Bid.from_text("12") == Bid(12) and Play.from_text("TD") == Play("TD")
    for bad in ("JK", "as", "07", "+7", "pass\n", "", "1000", None):
        with pytest.raises(InvalidAction):
            Action.from_text(bad)
    with pytest.raises(InvalidAction):
        Bid.from_text("AS")  # a Play, not a Bid
    with pytest.raises(InvalidAction):
        Play.from_text("pass")


def test_bid_decisions_offer_bids_and_play_decisions_offer_cards():
    for seed in range(3):
        state, _ = SPEC.new_game(seed)
        rng = random.Random(seed)
        while state.to_act() is not None:
            kind = Play if state.decision() == "play" else Bid
            legal = state.legal_actions()
            assert all(isinstance(Action.from_text(a), kind) for a in legal)
            state.apply(rng.choice(legal))


# --- BA-1, BA-2 ---------------------------------------------------------------


def test_BA_1_deck_has_52_cards_and_two_jokers():
    assert len(DECK) == 54 == len(set(DECK))
    assert "BJ" in DECK and "LJ" in DECK
    state, events = SPEC.new_game(7)
    cards = [c for e in events if e.data["type"] == "hand" for c in e.data["cards"]]
    cards.append(state.observe(0)["turn_up"])
    assert len(cards) == len(set(cards)) == 53 and set(cards) <= set(DECK)


def test_BA_1_jokers_are_dealt():
    seen = set()
    for seed in range(30):
        _, events = SPEC.new_game(seed)
        for e in events:
            if e.data["type"] == "hand":
                seen.update(c for c in e.data["cards"] if c in ("BJ", "LJ"))
    assert seen == {"BJ", "LJ"}


def test_BA_2_twenty_five_counted_deals_of_13_down_to_1_and_back():
    expected = [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    assert [hand_size(k) for k in range(1, 26)] == expected
    state, log = random_game(4)
    scored = of_type(log, "deal_score")
    assert [e["deal"] for e in scored] == list(range(1, 26))
    assert [e["h"] for e in scored] == expected
    for d in of_type(log, "deal"):
        assert d["h"] == hand_size(d["deal"])
    for e in of_type(log, "hand"):
        assert len(e["cards"]) in expected
    assert sum(1 for e in log if e["type"] == "trick") == sum(expected)


def test_BA_2_thirteen_card_deal_leaves_a_stock_of_two():
    hands = [list(DECK[i:52:4]) for i in range(4)]
    state, events = BackAlleyState.from_deal(dealer=0, hands=hands, stock=["BJ", "LJ"], deal=25)
    assert state.observe(0)["turn_up"] == "BJ" and state.observe(0)["trump"] is None
    assert state.observe(0)["joker_discard"] is None  # the other joker is in the stock


# --- BA-3 trump ---------------------------------------------------------------


def test_BA_3_1_suited_turn_up_makes_trump():
    state, events = deal(THREE, "7H")
    obs = state.observe(1)
    assert obs["turn_up"] == "7H" and obs["trump"] == "H"
    assert events[0].data["trump"] == "H" and events[0].data["turn_up"] == "7H"


def test_BA_3_2_joker_turn_up_holder_of_other_joker_discards_face_up_and_draws_privately():
    state, events = deal(
        ["AS KH 3D", "QH 5D 7C", "2H 9D LJ", "3H TD 9C"], "BJ", stock=["4C", "6C"]
    )
    data = [(e.data, e.to) for e in events]
    assert ({"type": "joker_discard", "seat": 2, "card": "LJ"}, None) in data
    assert ({"type": "draw", "seat": 2, "count": 1}, None) in data
    assert ({"type": "drawn", "seat": 2, "cards": ["4C"]}, (2,)) in data
    kinds = [d["type"] for d, _ in data]
    assert kinds.index("joker_discard") < kinds.index("draw") == kinds.index("drawn") - 1
    assert ({"type": "hand", "seat": 2, "cards": ["LJ", "2H", "9D"]}, (2,)) in data
    assert sorted(state.observe(2)["hand"]) == ["2H", "4C", "9D"]
    for seat in range(4):
        obs = state.observe(seat)
        assert obs["trump"] is None
        assert obs["joker_discard"] == {"seat": 2, "card": "LJ"}


def test_BA_3_2_thirteen_card_deal_draws_the_last_stock_card():
    cards = [c for c in DECK if c not in ("BJ", "5C")]  # 52 cards, LJ among them
    hands = [cards[i::4] for i in range(4)]
    holder = next(s for s in range(4) if "LJ" in hands[s])
    state, events = BackAlleyState.from_deal(dealer=0, hands=hands, stock=["BJ", "5C"], deal=1)
    hand = state.observe(holder)["hand"]
    assert "5C" in hand and "LJ" not in hand and len(hand) == 13
    assert state.observe(0)["joker_discard"] == {"seat": holder, "card": "LJ"}


def test_BA_3_2_joker_turn_up_with_other_joker_in_stock_changes_nothing():
    state, events = deal(THREE, "LJ", stock=["BJ"])
    assert not [e for e in events if e.data["type"] in ("joker_discard", "draw", "drawn")]
    assert state.observe(0)["joker_discard"] is None
    assert state.observe(0)["hand"] == ["AS", "KH", "3D"]


def test_BA_3_2_no_trump_deal_has_no_trumps():
    state, _ = deal(THREE, "BJ", stock=["LJ"])
    act(state, "1 pass pass pass")
    assert state.legal_actions() == ["AS", "KH", "3D"]  # any lead, spades included
    state, _ = deal(["2H AS 3D", "QH 5D 7C", "AH 9D 8C", "3H TD 9C"], "BJ", stock=["LJ"])
    act(state, "1 pass pass pass")
    # Hearts led: the ace of hearts wins.
    log = act(state, "2H QH AH 3H")
    assert of_type(log, "trick")[0]["winner"] == 2
    # Diamonds led: seat 1, void, plays the ace of spades, which is no trump.
    state, _ = deal(["2H KS 3D", "AS QC 7C", "AH 9D 8C", "3H TD 9C"], "BJ", stock=["LJ"])
    act(state, "1 pass pass pass")
    log = act(state, "3D AS 9D TD")
    assert of_type(log, "trick")[0]["winner"] == 3
    assert state.observe(0)["broken"] is False


def test_BA_3_3_jokers_are_trumps_for_following_winning_and_leading():
    # Following: spades (trump) led, seat 1's only trump is LJ, so it must play it.
    state, _ = deal(["AS KH 3D", "LJ 5D 7C", "2S 9D 8C", "3H TD 9C"], "4S")
    act(state, "board pass pass pass")
    state.apply("AS")
    assert state.legal_actions() == ["LJ"]
    # Winning: hearts led, seat 1 void in hearts ruffs with the little joker.
    state, _ = deal(["KH AS 3D", "LJ 5D 7C", "2H 9D 8C", "AH TD 9C"], "4S")
    act(state, "1 pass pass pass")
    log = act(state, "KH LJ 2H AH")
    assert of_type(log, "trick")[0]["winner"] == 1
    assert state.observe(0)["broken"] is True
    # Leading: a joker is a trump lead (see BA-8.2 tests).
    state, _ = deal(["BJ KH 3D", "QH 5D 7C", "2H 9D 8C", "3H TD 9C"], "4S")
    act(state, "1 pass pass pass")
    assert state.legal_actions() == ["KH", "3D"]


# --- BA-4 ranking -----------------------------------------------------------------


def test_BA_4_big_joker_beats_little_joker_beats_ace_of_trumps():
    state, _ = deal(["AS KH 3D", "LJ 5D 7C", "BJ 9D 8C", "KS TD 9C"], "4S")
    act(state, "board pass pass pass")
    log = act(state, "AS LJ BJ KS")
    assert of_type(log, "trick")[0]["winner"] == 2
    state, _ = deal(["AS KH 3D", "LJ 5D 7C", "QS 9D 8C", "KS TD 9C"], "4S")
    act(state, "board pass pass pass")
    log = act(state, "AS LJ QS KS")
    assert of_type(log, "trick")[0]["winner"] == 1


def test_BA_4_plain_suit_ranks_ace_high_and_ten_between_nine_and_jack():
    state, _ = deal(["9H AS 3D", "TH 5D 7C", "JH 9D 8C", "2H TD 9C"], "4C")
    act(state, "1 pass pass pass")
    log = act(state, "9H TH JH 2H")
    assert of_type(log, "trick")[0]["winner"] == 2
    state, _ = deal(["KH AS 3D", "AH 5D 7C", "QH 9D 8C", "2H TD 9C"], "4C")
    act(state, "1 pass pass pass")
    log = act(state, "KH AH QH 2H")
    assert of_type(log, "trick")[0]["winner"] == 1


# --- BA-5 bidding -----------------------------------------------------------------


def test_BA_5_bidding_starts_left_of_dealer_each_bids_once_clockwise():
    state, events = deal(THREE, "2S", dealer=1)
    seats = []
    for a in ("pass", "1", "2", "pass"):
        seats.append(state.to_act())
        assert state.decision() == "bid"
        state.apply(a)
    assert seats == [2, 3, 0, 1]
    assert state.decision() == "play"
    assert state.observe(0)["bids"] == ["2", "pass", "pass", "1"]


def test_BA_5_1_pass_adds_nothing_to_the_team_total():
    state, _ = deal(THREE, "2S")
    act(state, "2 pass pass 1")
    assert state.observe(0)["contracts"] == [{"target": 2, "board": 0}, {"target": 1, "board": 0}]


def test_BA_5_2_numbers_run_from_1_to_h_minus_1():
    state, _ = deal(THREE, "2S")
    assert state.legal_actions() == ["pass", "1", "2", "board"]
    state, _ = deal(["AS", "KH", "QD", "JC"], "3D")
    assert state.legal_actions() == ["pass", "board"]  # one card: pass or board only
    hands = [list(DECK[i:52:4]) for i in range(4)]
    state, _ = BackAlleyState.from_deal(dealer=0, hands=hands, stock=["BJ", "LJ"], deal=1)
    assert state.legal_actions() == ["pass", *map(str, range(1, 13)), "board"]
    for bad in ("13", "0"):
        with pytest.raises(IllegalAction):
            state.apply(bad)
    for bad in ("-1", "01", "1.0", "twelve", " 1"):
        with pytest.raises(InvalidAction):
            state.apply(bad)


def test_BA_5_2_bids_need_not_be_higher_than_earlier_bids():
    state, _ = deal(THREE, "2S")
    act(state, "2 1")
    assert "1" in state.legal_actions() and "2" in state.legal_actions()
    act(state, "1 2")
    assert state.observe(0)["contracts"] == [{"target": 3, "board": 0}, {"target": 3, "board": 0}]


def test_BA_5_3_board_levels_follow_the_order_made():
    state, events = deal(THREE, "2S")
    log = act(state, "board board board board")
    assert [(e["seat"], e["level"]) for e in of_type(log, "bid")] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert state.observe(3)["board_levels"] == [1, 2, 3, 4]
    state, _ = deal(THREE, "2S")
    log = act(state, "1 board pass board")
    assert [e["level"] for e in of_type(log, "bid")] == [0, 1, 0, 2]
    assert state.observe(0)["board_levels"] == [0, 1, 0, 2]


def test_BA_5_4_all_pass_redeals_same_size_by_the_next_dealer_and_does_not_count():
    state, _ = SPEC.new_game(6)
    first = state.observe(0)
    log = _all_pass(state)
    obs = state.observe(0)
    assert obs["deal"] == first["deal"] == 1 and obs["h"] == 13
    assert obs["dealer"] == (first["dealer"] + 1) % 4
    assert obs["redeals"] == 1 and obs["scores"] == [0, 0]
    assert not of_type(log, "deal_score")
    assert of_type(log, "redeal") == [{"type": "redeal", "deal": 1, "dealer": first["dealer"], "redeals": 1}]
    new_deal = of_type(log, "deal")[0]
    assert new_deal["deal"] == 1 and new_deal["redeals"] == 1
    assert state.to_act() == (obs["dealer"] + 1) % 4
    assert len(of_type(log, "hand")) == 4
    # A constructed small deal: the redeal keeps h.
    state, _ = deal(THREE, "2S")
    _all_pass(state)
    assert state.observe(0)["h"] == 3 and state.observe(0)["deal"] == 11
    assert len(state.observe(0)["hand"]) == 3


# --- BA-6 contracts -----------------------------------------------------------------


def test_BA_6_board_contract_takes_the_highest_level_and_ignores_partner_number():
    state, _ = deal(THREE, "2S")
    act(state, "2 board board pass")
    # team 0: seat 0 bid 2, seat 2 board (level 2) -> board level 2, target h
    assert state.observe(0)["contracts"] == [{"target": 3, "board": 2}, {"target": 3, "board": 1}]
    state, _ = deal(THREE, "2S")
    act(state, "board pass board pass")
    assert state.observe(0)["contracts"] == [{"target": 3, "board": 2}, {"target": 0, "board": 0}]


def test_BA_6_numeric_target_is_the_sum_of_both_bids():
    hands = [list(DECK[i:52:4]) for i in range(4)]
    state, _ = BackAlleyState.from_deal(dealer=3, hands=hands, stock=["BJ", "LJ"], deal=1)
    act(state, "7 pass 8 12")
    # A target can exceed h.
    assert state.observe(0)["contracts"] == [{"target": 15, "board": 0}, {"target": 12, "board": 0}]


def test_BA_6_contracts_event_is_public():
    state, _ = deal(THREE, "2S")
    state.apply("1")
    state.apply("pass")
    state.apply("pass")
    events = state.apply("board")
    assert [(e.data, e.to) for e in events][-1] == (
        {"type": "contracts", "contracts": [{"target": 1, "board": 0}, {"target": 3, "board": 1}],
         "leader": 3}, None)


# --- BA-7 first lead ------------------------------------------------------------------

FOUR = ["AS KH 3D 4C", "QH 5D 7C 6S", "2H 9D 8C 5S", "3H TD 9C 7S"]


def test_BA_7_last_board_bidder_leads():
    state, _ = deal(FOUR, "2C")
    act(state, "3 board pass board")
    assert state.to_act() == 3
    state, _ = deal(FOUR, "2C")
    act(state, "board 3 pass pass")
    assert state.to_act() == 0


def test_BA_7_highest_number_leads_ties_go_to_the_first_bidder():
    state, _ = deal(FOUR, "2C")
    act(state, "2 3 3 1")
    assert state.to_act() == 1
    state, _ = deal(FOUR, "2C", dealer=1)  # bidding order 2, 3, 0, 1
    act(state, "3 1 2 3")
    assert state.to_act() == 2
    state, _ = deal(FOUR, "2C", dealer=0)  # bidding order 1, 2, 3, 0
    act(state, "pass pass pass 1")
    assert state.to_act() == 0


# --- BA-8 play ---------------------------------------------------------------------------


def test_BA_8_winner_leads_next_trick_and_h_tricks_are_played():
    state, _ = deal(["KH 2C 3D", "QH AC 7C", "2H 9D 8C", "3H TD 9C"], "2S")
    act(state, "1 pass pass pass")
    log = act(state, "KH QH 2H 3H")
    assert of_type(log, "trick")[0]["winner"] == 0 and state.to_act() == 0
    log = act(state, "2C AC 8C 9C")
    assert of_type(log, "trick")[0]["winner"] == 1 and state.to_act() == 1
    log = act(state, "7C 9D TD 3D")
    assert of_type(log, "trick")[0] == {
        "type": "trick", "n": 3, "leader": 1, "cards": ["7C", "9D", "TD", "3D"], "winner": 1,
        "tricks_won": [1, 2]}
    assert of_type(log, "deal_score")[0]["tricks_won"] == [1, 2]
    assert state.observe(0)["deal"] == 12


def test_BA_8_1_must_follow_suit_if_able_else_any_card():
    state, _ = deal(["KH 2C 3D", "QH AH 7C", "2S 9D 8C", "3H TD 9C"], "4S")
    act(state, "1 pass pass pass")
    state.apply("KH")
    assert state.legal_actions() == ["AH", "QH"]
    with pytest.raises(IllegalAction):
        state.apply("7C")
    state.apply("QH")
    assert state.legal_actions() == ["2S", "8C", "9D"]  # void: any card


def test_BA_8_1_joker_is_not_a_card_of_a_plain_suit():
    state, _ = deal(["KH 2C 3D", "BJ 5H 7C", "2S 9D 8C", "3H TD 9C"], "4S")
    act(state, "1 pass pass pass")
    state.apply("KH")
    assert state.legal_actions() == ["5H"]


def test_BA_8_1_trump_led_must_be_followed_with_trump_jokers_included():
    state, _ = deal(["AS KH 3D", "LJ 5D 7C", "BJ 2S 8C", "3H TD 9C"], "4S")
    act(state, "board pass pass pass")
    state.apply("AS")
    assert state.legal_actions() == ["LJ"]
    state.apply("LJ")
    assert state.legal_actions() == ["BJ", "2S"]


def test_BA_8_2_trump_lead_needs_broken_trump():
    state, _ = deal(THREE, "2S")
    act(state, "1 pass pass pass")
    assert state.legal_actions() == ["KH", "3D"]
    assert state.observe(0)["broken"] is False
    with pytest.raises(IllegalAction):
        state.apply("AS")
    # Trick 1 without a trump: still not broken.
    act(state, "KH QH 2H 3H")
    assert state.legal_actions() == ["3D"]


def test_BA_8_2_a_trump_played_off_suit_in_an_earlier_trick_breaks_trump():
    state, _ = deal(["KH 2C 3D", "5S 6S 7C", "2H 9D 8C", "3H TD 9C"], "4S")
    act(state, "1 pass pass pass")
    state.apply("KH")
    state.apply("5S")  # seat 1 is void in hearts and ruffs
    assert state.observe(0)["broken"] is False  # not in an *earlier* trick yet
    log = act(state, "2H 3H")
    assert of_type(log, "trick")[0]["winner"] == 1
    assert state.observe(0)["broken"] is True
    assert state.legal_actions() == ["6S", "7C"]


def test_BA_8_2_a_board_bidder_may_lead_trump_but_not_the_partner():
    state, _ = deal(THREE, "2S")
    act(state, "board pass pass pass")
    assert state.legal_actions() == ["AS", "KH", "3D"]
    # seat 0 bid board; seat 2 (partner, bid 1) wins trick 1 and may not lead trump.
    state, _ = deal(["KH 2C 3D", "QH 5D 7C", "AH 9S 8C", "3H TD 9C"], "4S")
    act(state, "board pass 1 pass")
    act(state, "KH QH AH 3H")
    assert state.to_act() == 2
    assert state.legal_actions() == ["8C"]


def test_BA_8_2_ruling_a_hand_of_nothing_but_trumps_may_lead_trump():
    state, _ = deal(["AS KS 3S", "QH 5D 7C", "2H 9D 8C", "3H TD 9C"], "2S")
    act(state, "1 pass pass pass")
    assert state.legal_actions() == ["AS", "KS", "3S"]
    state, _ = deal(["BJ LJ 3S", "QH 5D 7C", "2H 9D 8C", "3H TD 9C"], "2S")
    act(state, "1 pass pass pass")
    assert state.legal_actions() == ["BJ", "LJ", "3S"]


def test_BA_8_2_a_joker_lead_is_a_trump_lead():
    state, _ = deal(["LJ KH 3D", "QH 5D 7C", "2H 9D 8C", "3H TD 9C"], "4S")
    act(state, "1 pass pass pass")
    assert "LJ" not in state.legal_actions()


def test_BA_8_3_big_joker_led_forces_highest_trump():
    state, _ = deal(["BJ KH 3D", "4S LJ 7H", "9S 2S KC", "AH 3H 5C"], "TS")
    act(state, "board pass pass pass")
    state.apply("BJ")
    assert state.legal_actions() == ["LJ"]
    state.apply("LJ")
    assert state.legal_actions() == ["9S"]
    state.apply("9S")
    assert state.legal_actions() == ["AH", "3H", "5C"]  # no trump: any card


def test_BA_8_3_little_joker_led_forces_lowest_trump():
    state, _ = deal(["LJ KH 3D", "AS 4S 7H", "BJ 2S KC", "AH 3H 5C"], "TS")
    act(state, "board pass pass pass")
    state.apply("LJ")
    assert state.legal_actions() == ["4S"]
    state.apply("4S")
    assert state.legal_actions() == ["2S"]
    state.apply("2S")
    assert state.legal_actions() == ["AH", "3H", "5C"]
    state, _ = deal(["LJ KH 3D", "BJ 4H 7H", "2D 2H KC", "AH 3H 5C"], "TS")
    act(state, "board pass pass pass")
    state.apply("LJ")
    assert state.legal_actions() == ["BJ"]  # its only (hence lowest) trump


def test_BA_8_4_highest_trump_wins_else_highest_of_suit_led():
    state, _ = deal(["KH 2C 3D", "AH 5D 7C", "2S 9D 8C", "3S TD 9C"], "4S")
    act(state, "1 pass pass pass")
    log = act(state, "KH AH 2S 3S")
    assert of_type(log, "trick")[0]["winner"] == 3
    state, _ = deal(["KH 2C 3D", "AC 5D 7C", "2H 9D 8C", "AD TD 9C"], "4S")
    act(state, "1 pass pass pass")
    log = act(state, "KH AC 2H AD")  # off-suit aces do not win
    assert of_type(log, "trick")[0]["winner"] == 0


# --- BA-9 scoring -----------------------------------------------------------------------


def test_BA_9_1_numeric_target_made_and_set():
    assert deal_score(4, 0, 6, 13) == 22
    assert deal_score(4, 0, 4, 13) == 20
    assert deal_score(4, 0, 3, 13) == -20
    assert deal_score(15, 0, 13, 13) == -75


def test_BA_9_1_ruling_target_zero_scores_the_tricks():
    assert deal_score(0, 0, 0, 5) == 0
    assert deal_score(0, 0, 3, 5) == 3


def test_BA_9_1_played_deal_scores_both_teams():
    # h=2, trump D.  Seat 0 wins both tricks; team 0 bid 1, team 1 bid 1.
    state, _ = deal(["AS AH", "3S 3H", "4S 4H", "5S 5H"], "2D")
    log = act(state, "1 1 pass pass AS 3S 4S 5S AH 3H 4H 5H")
    score = of_type(log, "deal_score")[0]
    assert score["tricks_won"] == [2, 0]
    assert score["deal_scores"] == [6, -5] and score["scores"] == [6, -5]
    assert state.observe(1)["scores"] == [6, -5]
    # Target 0 (team 1 all pass) wins one trick: scores 1.
    state, _ = deal(["AS 2H", "3S AH", "4S 4H", "5S 5H"], "2D")
    log = act(state, "1 pass pass pass AS 3S 4S 5S 2H AH 4H 5H")
    assert of_type(log, "deal_score")[0]["deal_scores"] == [5, 1]


def test_BA_9_2_board_made_and_failed_by_level():
    assert deal_score(13, 1, 13, 13) == 130
    assert deal_score(13, 3, 13, 13) == 390
    assert deal_score(5, 2, 4, 5) == -100
    state, _ = deal(["AS AH", "3S 3H", "4S 4H", "5S 5H"], "2D")
    log = act(state, "board board pass pass")
    assert state.to_act() == 1  # BA-7: last board bidder leads
    log += act(state, "3S 4S 5S AS AH 3H 4H 5H")
    score = of_type(log, "deal_score")[0]
    assert score["contracts"] == [{"target": 2, "board": 1}, {"target": 2, "board": 2}]
    assert score["deal_scores"] == [20, -40]


def test_BA_9_scores_accumulate_over_a_game():
    state, log = random_game(9)
    scored = of_type(log, "deal_score")
    totals = [0, 0]
    for e in scored:
        for i in range(2):
            c = e["contracts"][i]
            assert e["deal_scores"][i] == deal_score(c["target"], c["board"], e["tricks_won"][i], e["h"])
            totals[i] += e["deal_scores"][i]
        assert e["scores"] == totals
        assert sum(e["tricks_won"]) == e["h"]
    assert list(state.outcome().scores) == totals


# --- BA-10 end ----------------------------------------------------------------------------


def _finish_last_deal(scores, seed=0):
    hands = [list(DECK[i:52:4]) for i in range(4)]
    state, _ = BackAlleyState.from_deal(dealer=2, hands=hands, stock=["BJ", "LJ"], deal=25, scores=scores)
    rng = random.Random(seed)
    log = []
    act(state, "3 2 pass 4")
    while state.to_act() is not None:
        log.extend(e.data for e in state.apply(rng.choice(state.legal_actions())))
    return state, log


def test_BA_10_after_the_25th_deal_more_points_wins():
    state, log = _finish_last_deal((100, 0))
    out = state.outcome()
    assert out.status == "win" and out.winners == (0,) and out.reason == "all_deals_played"
    assert log[-1]["type"] == "game_over" and log[-1]["winners"] == [0]
    state, _ = _finish_last_deal((0, 100))
    assert state.outcome().winners == (1,)
    assert state.to_act() is None and state.decision() == "over"
    assert state.observe(0)["phase"] == "over"


def test_BA_10_equal_points_draw():
    _, log = _finish_last_deal((0, 0))
    d0, d1 = of_type(log, "deal_score")[0]["deal_scores"]
    state, log = _finish_last_deal((d1, d0))
    out = state.outcome()
    assert out.status == "draw" and out.winners == () and out.scores == (d0 + d1, d0 + d1)


def test_BA_10_a_full_game_ends_after_deal_25():
    for seed in range(5):
        state, log = random_game(seed)
        out = state.outcome()
        a, b = out.scores
        assert out.status == ("draw" if a == b else "win")
        assert of_type(log, "deal_score")[-1]["deal"] == 25
        assert state.observe(0)["deal"] == 25


# --- the contract details -------------------------------------------------------------


def test_invalid_and_illegal_actions_leave_the_state_unchanged():
    state, _ = deal(THREE, "2S")
    before = json.dumps([state.observe(s) for s in range(4)])
    for bad in ("", "XX", "JK", "pass ", "Board", None, 3):
        with pytest.raises(InvalidAction):
            state.apply(bad)
    for bad in ("AS", "3", "BJ"):
        with pytest.raises(IllegalAction):
            state.apply(bad)
    act(state, "1 pass pass pass")
    for bad in ("pass", "board", "1", "AS", "QH", "BJ"):
        with pytest.raises(IllegalAction):
            state.apply(bad)
    assert state.legal_actions() == ["KH", "3D"]
    state2, _ = deal(THREE, "2S")
    assert json.dumps([state2.observe(s) for s in range(4)]) == before


def test_clone_is_independent_including_future_shuffles():
    state, _ = SPEC.new_game(17)
    rng = random.Random(1)
    for _ in range(30):
        state.apply(rng.choice(state.legal_actions()))
    copy = state.clone()
    snapshot = json.dumps(copy.observe(2))
    a_log, b_log = [], []
    rng_a, rng_b = random.Random(5), random.Random(5)
    while state.to_act() is not None:
        a_log.extend(e.data for e in state.apply(rng_a.choice(state.legal_actions())))
    assert json.dumps(copy.observe(2)) == snapshot
    while copy.to_act() is not None:
        b_log.extend(e.data for e in copy.apply(rng_b.choice(copy.legal_actions())))
    assert a_log == b_log


def test_legal_actions_returns_a_fresh_list():
    state, _ = deal(THREE, "2S")
    legal = state.legal_actions()
    legal.clear()
    assert state.legal_actions() == ["pass", "1", "2", "board"]


def test_observation_fields_follow_the_deal():
    state, _ = deal(["KH 2C 3D", "5S 6S 7C", "2H 9D 8C", "3H TD 9C"], "4S", scores=(30, -5))
    obs = state.observe(1)
    assert obs["phase"] == "bid" and obs["to_act"] == 0 and obs["contracts"] is None
    assert obs["trick"] is None and obs["bids"] == [None] * 4
    act(state, "1 board pass pass 5S 2H 3H")  # seat 1 bid board, leads and may lead trump
    obs = state.observe(3)
    assert obs == {
        "seat": 3, "team": 1, "phase": "play", "to_act": 0, "deal": 11, "num_deals": 25,
        "h": 3, "dealer": 3, "redeals": 0, "hand": ["9C", "TD"], "turn_up": "4S",
        "trump": "S", "joker_discard": None, "bids": ["1", "board", "pass", "pass"],
        "board_levels": [0, 1, 0, 0],
        "contracts": [{"target": 1, "board": 0}, {"target": 3, "board": 1}],
        "trick": {"leader": 1, "cards": ["5S", "2H", "3H"]},
        "past_tricks": [], "tricks_won": [0, 0], "broken": False, "scores": [30, -5],
    }
    act(state, "KH")
    obs = state.observe(0)
    assert obs["past_tricks"] == [{"leader": 1, "cards": ["5S", "2H", "3H", "KH"], "winner": 1}]
    assert obs["tricks_won"] == [0, 1] and obs["broken"] is True
    assert obs["trick"] == {"leader": 1, "cards": []} and obs["to_act"] == 1


def test_from_deal_refuses_bad_deals():
    with pytest.raises(ValueError):
        BackAlleyState.from_deal(dealer=0, hands=[["AS"], ["AS"], ["KH"], ["QH"]], stock=["2C"], deal=13)
    with pytest.raises(ValueError):
        BackAlleyState.from_deal(dealer=0, hands=[["AS"], ["KS"], ["KH"], ["QH"]], stock=["2C"], deal=12)
    with pytest.raises(ValueError):
        BackAlleyState.from_deal(dealer=0, hands=[["AS"], ["KS"], ["KH"], ["JK"]], stock=["2C"], deal=13)
    with pytest.raises(ValueError):
        BackAlleyState.from_deal(dealer=0, hands=[["AS"], ["KS"], ["KH"], ["QH"]], stock=[], deal=13)
