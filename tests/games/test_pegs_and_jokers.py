"""Pegs and Jokers rules (RULES.md §0, §3): one or more tests per rule id.

Board of 4 players (72 holes) used unless a test says otherwise:

    seat  side      in-spot  come-out
      0   T0-T17    T3       T8
      1   T18-T35   T21      T26
      2   T36-T53   T39      T44
      3   T54-T71   T57      T62

Teams: seats 0 and 2 against seats 1 and 3.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from referee.games import GAMES, IllegalAction, InvalidAction, InvalidOptions
from referee.games.cards import randbelow, shuffle
from referee.games.pegs_and_jokers import SPEC, PegsAndJokersState
from referee.games.pegs_and_jokers.board import board_for
from referee.games.pegs_and_jokers.notation import Action, Discard, Play, Step
from referee.games.pegs_and_jokers.rules import deck_for

ALL_HOME = ["H1", "H2", "H3", "H4", "H5"]


def position(pegs=None, hand=(), to_act=0, players=4, **kw) -> PegsAndJokersState:
    return PegsAndJokersState.from_position(
        players, pegs=pegs or {}, hands={to_act: list(hand)}, to_act=to_act, **kw
    )


def moves_of(state, card=None):
    legal = state.legal_actions()
    return [a for a in legal if card is None or a.startswith(card + " ")]


def after(state, action):
    """(pegs per colour, the move/discard event) after applying action to a copy."""
    s = state.clone()
    events = s.apply(action)
    main = next(e.data for e in events if e.data["type"] in ("move", "discard"))
    return s.peg_texts(), main


def pegs_of(state, colour):
    return state.peg_texts()[colour]


# -- §0 conventions -----------------------------------------------------------------


def test_registry_name_title_and_rules_version():
    assert GAMES["pegs-and-jokers"] is SPEC
    assert (SPEC.name, SPEC.title, SPEC.rules_version) == ("pegs-and-jokers", "Pegs and Jokers", "2")


def test_options_are_filled_and_checked():
    assert SPEC.normalize_options({}) == {"players": 4, "max_turns": 10_000}
    assert SPEC.normalize_options(None) == {"players": 4, "max_turns": 10_000}
    assert SPEC.normalize_options({"players": 8, "max_turns": 50}) == {"players": 8, "max_turns": 50}
    for bad in ({"players": 5}, {"players": 2}, {"players": "4"}, {"players": True},
                {"max_turns": 0}, {"max_turns": 1.5}, {"colour": 1}):
        with pytest.raises(InvalidOptions):
            SPEC.normalize_options(bad)
    assert SPEC.num_seats({"players": 6}) == 6
    assert SPEC.num_teams({"players": 6}) == 2
    state, _ = SPEC.new_game(1)
    assert state.num_seats == 4


@pytest.mark.parametrize("players", [4, 6, 8])
def test_0_2_teams_are_even_and_odd_seats(players):
    state, _ = SPEC.new_game(0, {"players": players})
    opts = SPEC.normalize_options({"players": players})
    for seat in range(players):
        assert state.team_of(seat) == seat % 2 == SPEC.team_of(seat, opts)
    assert state.num_teams == 2


def test_0_4_first_dealer_is_uniform_from_the_seed_and_the_seed_replays_the_game():
    dealers = Counter()
    for seed in range(400):
        state, _ = SPEC.new_game(seed, {"players": 4})
        assert state.dealer == randbelow(random.Random(seed), 4)
        dealers[state.dealer] += 1
    assert set(dealers) == {0, 1, 2, 3} and min(dealers.values()) > 70
    a = [e.data for e in SPEC.new_game(7, {"players": 6})[1]]
    b = [e.data for e in SPEC.new_game(7, {"players": 6})[1]]
    c = [e.data for e in SPEC.new_game(8, {"players": 6})[1]]
    assert a == b and a != c


@pytest.mark.parametrize("players", [4, 8])
def test_0_5_cards_are_dealt_one_at_a_time_from_the_dealers_left(players):
    state, events = SPEC.new_game(11, {"players": players})
    rng = random.Random(11)
    dealer = randbelow(rng, players)
    deck = deck_for(players)
    shuffle(deck, rng)
    expected = {s: [] for s in range(players)}
    for _ in range(5):
        for i in range(1, players + 1):
            expected[(dealer + i) % players].append(deck.pop())
    hands = {e.data["seat"]: e.data["cards"] for e in events if e.data["type"] == "hand"}
    assert hands == expected


def test_0_6_observation_shows_own_hand_and_public_facts_only():
    state, _ = SPEC.new_game(3, {"players": 4})
    rng = random.Random(3)
    for _ in range(40):
        state.apply(rng.choice(state.legal_actions()))
    for seat in range(4):
        obs = state.observe(seat)
        json.dumps(obs)
        assert obs["seat"] == seat
        assert obs["hand"] == sorted(state.hands[seat])
        assert obs["hand_sizes"] == [len(h) for h in state.hands]
        assert obs["draw_pile"] == len(state.draw_pile)  # a count, never the order
        assert obs["discard_pile"] == state.discard_pile  # face up (PJ-3)
        assert obs["pegs"] == state.peg_texts()
        text = json.dumps(obs)
        for other in range(4):
            if other != seat and state.hands[other]:
                assert json.dumps(sorted(state.hands[other])) not in text
        assert set(obs) == {
            "seat", "players", "holes", "dealer", "turn", "turns_played", "max_turns", "to_act",
            "colour", "hand", "hand_sizes", "draw_pile", "discard_pile", "pegs", "home",
            "team_home", "come_out", "in_spot", "hits",
        }


def test_0_6_hands_and_drawn_cards_go_only_to_their_owner():
    state, events = SPEC.new_game(5, {"players": 6})
    rng = random.Random(5)
    seen = list(events)
    for _ in range(300):
        seen += state.apply(rng.choice(state.legal_actions()))
    private_types = Counter()
    for e in seen:
        if e.data["type"] in ("hand", "drawn"):
            assert e.to == (e.data["seat"],)
            private_types[e.data["type"]] += 1
        else:
            assert e.to is None
            assert "cards" not in e.data or isinstance(e.data["cards"], int)
            private_types["public " + e.data["type"]] += 1
    assert private_types["hand"] == 6 and private_types["drawn"] >= 300
    assert private_types["public draw"] == private_types["drawn"]


# -- PJ-1 … PJ-3 -------------------------------------------------------------------------


@pytest.mark.parametrize("players,decks,jokers,total", [(4, 3, 6, 162), (6, 3, 6, 162), (8, 4, 8, 216)])
def test_PJ_1_decks_and_jokers(players, decks, jokers, total):
    deck = deck_for(players)
    counts = Counter(deck)
    assert len(deck) == total and counts["JK"] == jokers
    assert all(counts[c] == decks for c in counts if c != "JK") and len(counts) == 53
    state, _ = SPEC.new_game(2, {"players": players})
    rng = random.Random(2)
    for _ in range(400):  # cards are conserved through plays, draws and reshuffles
        held = [c for h in state.hands for c in h] + state.draw_pile + state.discard_pile
        assert Counter(held) == counts
        state.apply(rng.choice(state.legal_actions()))


def test_PJ_1_each_player_has_five_pegs_a_start_and_a_home():
    state, _ = SPEC.new_game(0, {"players": 8})
    assert state.peg_texts() == [["S"] * 5] * 8
    assert state.observe(0)["home"] == [0] * 8


@pytest.mark.parametrize("players", [4, 6, 8])
def test_PJ_2_track_of_18N_holes_with_each_sides_come_out_and_in_spot(players):
    board = board_for(players)
    assert board.holes == 18 * players
    for p in range(players):
        assert board.come_out[p] == 18 * p + 8  # PJ-2.1
        assert board.in_spot[p] == 18 * p + 3  # PJ-2.2: five before the come-out hole
        assert board.come_out[p] - board.in_spot[p] == 5
    obs = SPEC.new_game(0, {"players": players})[0].observe(0)
    assert obs["holes"] == 18 * players
    assert obs["come_out"] == [18 * p + 8 for p in range(players)]
    assert obs["in_spot"] == [18 * p + 3 for p in range(players)]


def test_PJ_2_1_a_peg_comes_out_on_its_come_out_hole():
    assert moves_of(position(hand=["KH"], to_act=3)) == ["KH 3:S-T62"]
    assert moves_of(position(hand=["AS"], to_act=7, players=8)) == ["AS 7:S-T134"]


def test_PJ_2_3_home_is_entered_step_by_step_after_the_in_spot():
    s = position({1: ["T21"]}, ["AH", "2C"], to_act=1)
    assert moves_of(s, "AH") == ["AH 1:S-T26", "AH 1:T21-T22", "AH 1:T21-H1"]
    assert moves_of(s, "2C") == ["2C 1:T21-T23", "2C 1:T21-H2"]


def test_PJ_2_no_track_hole_is_safe_but_start_and_home_pegs_cannot_be_hit():
    # seat 1's pegs on its come-out hole and its in-spot are hit like any other
    s = position({0: ["T24", "T19"], 1: ["T26", "T21"]}, ["2C"])
    assert "2C 0:T24-T26" in moves_of(s) and "2C 0:T19-T21" in moves_of(s)
    pegs, ev = after(s, "2C 0:T24-T26")
    assert ev["parts"][0]["hits"] == [[1, "T26", "S"]]
    # a joker only targets track pegs: seat 1's pegs in start and home are out of reach
    s = position({0: ["T5"], 1: ["S", "H1", "T40"]}, ["JK"])
    assert moves_of(s, "JK") == ["JK 0:S-T40", "JK 0:T5-T40"]


def test_PJ_3_five_cards_each_and_the_rest_is_the_draw_pile():
    state, events = SPEC.new_game(4, {"players": 4})
    hands = [e.data for e in events if e.data["type"] == "hand"]
    assert [len(h["cards"]) for h in hands] == [5, 5, 5, 5]
    deal = events[0].data
    assert deal["type"] == "deal" and deal["dealer"] == state.dealer and deal["draw_pile"] == 142
    # the first player drew one more at the start of its turn (PJ-4.1)
    assert len(state.draw_pile) == 141 and len(state.hands[state.seat]) == 6


def test_PJ_3_ruling_an_empty_draw_pile_is_the_shuffled_discard_pile():
    discards = ["2C", "3C", "4C", "5C", "6C", "9C", "TC", "2D", "3D", "4D"]
    s = PegsAndJokersState.from_position(
        4, pegs={0: ["T10"]}, hands={0: ["2S"], 1: ["3S", "4S", "5S", "6S", "9S"]},
        to_act=0, draw_pile=[], discard_pile=discards, seed=9,
    )
    events = s.apply("2S 0:T10-T12")
    kinds = [e.data["type"] for e in events]
    assert kinds == ["move", "reshuffle", "turn", "draw", "drawn"]
    reshuffle = events[1]
    assert reshuffle.to is None and reshuffle.data == {"type": "reshuffle", "draw_pile": 11}
    assert s.discard_pile == [] and len(s.draw_pile) == 10
    assert events[3].to is None and events[3].data == {"type": "draw", "seat": 1, "count": 1}
    drawn = events[4].data["cards"]
    assert Counter(s.draw_pile + drawn) == Counter(discards + ["2S"])
    # seeded: the same position and action give the same new order
    t = PegsAndJokersState.from_position(
        4, pegs={0: ["T10"]}, hands={0: ["2S"], 1: ["3S", "4S", "5S", "6S", "9S"]},
        to_act=0, draw_pile=[], discard_pile=discards, seed=9,
    )
    t.apply("2S 0:T10-T12")
    assert t.draw_pile == s.draw_pile


# -- PJ-4 turns --------------------------------------------------------------------------


def test_PJ_4_left_of_the_dealer_starts_and_turns_go_clockwise():
    for players in (4, 6, 8):
        state, _ = SPEC.new_game(21, {"players": players})
        rng = random.Random(0)
        seats = []
        for _ in range(2 * players):
            seats.append(state.to_act())
            state.apply(rng.choice(state.legal_actions()))
        first = (state.dealer + 1) % players
        assert seats == [(first + i) % players for i in range(2 * players)]


def test_PJ_4_1_a_player_draws_up_to_six_at_the_start_of_its_turn():
    state, _ = SPEC.new_game(8, {"players": 6})
    rng = random.Random(8)
    for _ in range(200):
        seat = state.to_act()
        assert len(state.hands[seat]) == 6
        assert all(len(h) == 5 for i, h in enumerate(state.hands) if i != seat)
        events = state.apply(rng.choice(state.legal_actions()))
        turn = next(e for e in events if e.data["type"] == "turn")
        draw = next(e for e in events if e.data["type"] == "draw")
        drawn = next(e for e in events if e.data["type"] == "drawn")
        assert turn.to is None and turn.data["drew"] == 1 and "cards" not in turn.data
        assert draw.to is None and draw.data == {"type": "draw", "seat": state.to_act(), "count": 1}
        assert drawn.to == (state.to_act(),) and drawn.data["cards"][0] in state.hands[state.to_act()]


def test_PJ_4_2_the_card_is_played_face_up_and_the_turn_ends():
    s = position({0: ["T10"]}, ["5D", "9C"])
    events = s.apply("5D 0:T10-T15")
    assert s.discard_pile[-1] == "5D" and s.hands[0] == ["9C"]
    move = events[0]
    assert move.to is None
    assert move.data == {
        "type": "move", "turn": 1, "seat": 0, "colour": 0, "card": "5D",
        "action": "5D 0:T10-T15", "parts": [{"peg": ["T10", "T15"], "hits": []}], "hits": 0,
    }
    assert s.to_act() == 1 and s.turn == 1


def test_PJ_4_3_a_legal_non_joker_move_must_be_made():
    s = position({0: ["T10"], 1: ["T30"]}, ["2C", "JK", "8H"])
    legal = s.legal_actions()
    assert not [a for a in legal if a.startswith("discard")]
    assert "JK 0:T10-T30" in legal  # a joker move is still allowed
    before = s.legal_actions()
    with pytest.raises(IllegalAction):
        s.apply("discard 2C")
    assert s.legal_actions() == before and s.hands[0] == ["2C", "JK", "8H"]


def test_PJ_4_3_only_joker_moves_allow_a_discard_of_any_card():
    s = position({1: ["T30"]}, ["JK", "2C", "3D", "2C"])
    assert s.legal_actions() == [
        "JK 0:S-T30", "discard 2C", "discard 3D", "discard JK",
    ]
    pegs, ev = after(s, "discard 3D")
    assert ev == {"type": "discard", "turn": 1, "seat": 0, "colour": 0, "card": "3D"}


def test_PJ_4_3_no_legal_move_means_discarding_any_card():
    s = position({}, ["2C", "2C", "5H", "7S", "8D", "9S"])
    assert s.legal_actions() == ["discard 2C", "discard 5H", "discard 7S", "discard 8D", "discard 9S"]
    s.apply("discard 2C")
    assert s.discard_pile[-1] == "2C" and sorted(s.hands[0]) == ["2C", "5H", "7S", "8D", "9S"]


# -- PJ-5 cards ----------------------------------------------------------------------------


def test_PJ_5_1_an_ace_comes_out_or_moves_one():
    s = position({0: ["T20"]}, ["AC"])
    assert s.legal_actions() == ["AC 0:S-T8", "AC 0:T20-T21"]


def test_PJ_5_2_king_queen_and_jack_come_out_or_move_ten():
    s = position({0: ["T20"]}, ["KS", "QH", "JD"])
    assert s.legal_actions() == [
        "JD 0:S-T8", "JD 0:T20-T30", "KS 0:S-T8", "KS 0:T20-T30", "QH 0:S-T8", "QH 0:T20-T30",
    ]


def test_PJ_5_2_a_peg_cannot_come_out_onto_its_own_peg():
    s = position({0: ["T8"]}, ["KS"])
    assert s.legal_actions() == ["KS 0:T8-T18"]


@pytest.mark.parametrize(
    "card,steps", [("2C", 2), ("3D", 3), ("4H", 4), ("5S", 5), ("6C", 6), ("9D", 9), ("TH", 10)]
)
def test_PJ_5_3_number_cards_move_forward_their_value(card, steps):
    s = position({0: ["T30"]}, [card])
    assert s.legal_actions() == [f"{card} 0:T30-T{30 + steps}"]  # no coming out with these


def test_PJ_5_4_a_seven_moves_one_peg_seven_or_splits_between_two():
    # perft position 2: see test_perft_counts
    s = position({0: ["T10", "T30"]}, ["7C"])
    assert s.legal_actions() == [
        "7C 0:T10-T17", "7C 0:T30-T37",
        "7C 0:T10-T11,0:T30-T36", "7C 0:T10-T12,0:T30-T35", "7C 0:T10-T13,0:T30-T34",
        "7C 0:T10-T14,0:T30-T33", "7C 0:T10-T15,0:T30-T32", "7C 0:T10-T16,0:T30-T31",
    ]


def test_PJ_5_4_two_orders_that_end_alike_are_one_move_listed_in_one_order():
    s = position({0: ["T10", "T30"]}, ["7C"])
    assert "7C 0:T10-T11,0:T30-T36" in s.legal_actions()
    with pytest.raises(IllegalAction, match="other order"):
        s.apply("7C 0:T30-T36,0:T10-T11")
    assert s.to_act() == 0


def test_PJ_5_4_each_part_must_be_legal_on_the_board_the_earlier_part_left():
    # perft position 6
    s = position({0: ["T10", "T12"], 1: ["T13", "T17"]}, ["7H"])
    legal = s.legal_actions()
    assert "7H 0:T12-T15,0:T10-T14" in legal  # T12 moves first, then T10 passes its old hole
    with pytest.raises(IllegalAction):
        s.apply("7H 0:T10-T14,0:T12-T15")  # T10 would pass T12 first
    assert "7H 0:T10-T17" not in legal


def test_PJ_5_4_each_part_can_hit():
    s = position({0: ["T10", "T12"], 1: ["T13", "T17"]}, ["7H"])
    pegs, ev = after(s, "7H 0:T12-T16,0:T10-T13")
    assert ev["parts"] == [
        {"peg": ["T12", "T16"], "hits": []},
        {"peg": ["T10", "T13"], "hits": [[1, "T13", "S"]]},
    ]
    pegs, ev = after(s, "7H 0:T12-T17,0:T10-T12")
    assert ev["parts"][0]["hits"] == [[1, "T17", "S"]] and ev["hits"] == 1
    assert pegs[1] == ["S", "S", "S", "S", "T13"]


def test_PJ_5_4_a_part_may_enter_or_move_within_home():
    s = position({0: ["T1", "T30", "H3"]}, ["7D"])
    legal = s.legal_actions()
    assert "7D 0:T1-H1,0:T30-T34" in legal  # 3 steps: T2, T3, H1
    assert "7D 0:T30-T35,0:H3-H5" in legal
    assert "7D 0:T1-H2,0:H3-H5" not in legal  # 4 + 2 = 6, not 7
    assert "7D 0:T1-H2,0:H3-H4" not in legal  # 4 + 1 = 5


def test_PJ_5_4_pegs_in_start_cannot_take_part_and_the_whole_seven_is_used():
    s = position({0: ["T10"]}, ["7S"])
    assert s.legal_actions() == ["7S 0:T10-T17"]
    # the peg in home could go up to 4: not a use of the whole 7, so only the ace moves
    s = position({0: ["H1"]}, ["7S", "AS"])
    assert s.legal_actions() == ["AS 0:S-T8", "AS 0:H1-H2"]


def test_PJ_5_4_same_card_text_is_the_same_card():
    s = position({0: ["T10"]}, ["7S", "7S", "7C"])
    assert s.legal_actions() == ["7C 0:T10-T17", "7S 0:T10-T17"]


def test_PJ_5_5_an_eight_moves_a_track_peg_back_eight():
    s = position({0: ["T20", "T2", "H1"]}, ["8C"])
    assert s.legal_actions() == ["8C 0:T2-T66", "8C 0:T20-T12"]  # never a start or home peg
    # never into home: passing the in-spot backwards stays on the track
    s = position({0: ["T10"]}, ["8C"])
    assert s.legal_actions() == ["8C 0:T10-T2"]


def test_PJ_5_5_an_eight_cannot_pass_an_own_peg_and_hits_where_it_lands():
    s = position({0: ["T20", "T15"], 1: ["T7"]}, ["8C"])
    assert s.legal_actions() == ["8C 0:T15-T7"]
    pegs, ev = after(s, "8C 0:T15-T7")
    assert ev["parts"][0]["hits"] == [[1, "T7", "S"]]


def test_PJ_5_6_a_joker_jumps_from_start_or_track_onto_another_players_peg():
    s = position({0: ["T10", "T20", "H2"], 1: ["T40"], 3: ["T5"]}, ["JK"])
    assert s.legal_actions() == [
        "JK 0:S-T5", "JK 0:S-T40", "JK 0:T10-T5", "JK 0:T10-T40", "JK 0:T20-T5", "JK 0:T20-T40",
        "discard JK",
    ]
    # it passes over nothing: T10 reaches T40 although T20 (own) lies between
    pegs, ev = after(s, "JK 0:T10-T40")
    assert pegs[0] == ["S", "S", "T20", "T40", "H2"] and pegs[1] == ["S"] * 5
    assert ev["parts"][0]["hits"] == [[1, "T40", "S"]]


def test_PJ_5_6_a_joker_on_a_teammate_sends_it_to_its_in_spot():
    # perft position 4: seat 3 sits on seat 2's in-spot and goes back to start
    s = position({0: ["T10"], 1: ["T30"], 2: ["T50"], 3: ["T39"]}, ["JK"])
    pegs, ev = after(s, "JK 0:S-T50")
    assert ev["parts"][0]["hits"] == [[2, "T50", "T39"], [3, "T39", "S"]] and ev["hits"] == 2
    assert pegs[2] == ["S", "S", "S", "S", "T39"] and pegs[3] == ["S"] * 5


# -- PJ-6 movement -------------------------------------------------------------------------


def test_PJ_6_1_no_passing_or_landing_on_own_pegs_on_the_track():
    s = position({0: ["T10", "T12"], 1: ["T11"]}, ["5C", "2D"])
    assert s.legal_actions() == ["2D 0:T12-T14", "5C 0:T12-T17"]  # T10 is stuck behind T12
    s = position({0: ["T10", "T13"], 1: ["T11"]}, ["2D"])
    assert s.legal_actions() == ["2D 0:T10-T12", "2D 0:T13-T15"]  # passing seat 1 is fine


def test_PJ_6_1_no_passing_or_landing_on_own_pegs_in_home():
    s = position({0: ["T1", "H1", "H3"]}, ["4C", "3C", "AC"])
    assert s.legal_actions() == [
        "3C 0:T1-T4",  # T1-H1 would land on H1
        "4C 0:T1-T5",  # T1-H2 would pass H1
        "AC 0:S-T8", "AC 0:T1-T2", "AC 0:H1-H2", "AC 0:H3-H4",
    ]


def test_PJ_6_2_ruling_a_move_that_can_end_in_home_or_on_the_track_offers_both():
    s = position({0: ["T70"]}, ["9S", "TD", "6H"])
    assert s.legal_actions() == [
        "6H 0:T70-T4", "6H 0:T70-H1",  # 5 steps to the in-spot, then H1
        "9S 0:T70-T7", "9S 0:T70-H4",
        "TD 0:T70-T8", "TD 0:T70-H5",
    ]


def test_PJ_6_2_home_needs_the_exact_count_and_no_peg_passed_in_home():
    s = position({0: ["T70", "H5"]}, ["TD", "9S"])
    assert s.legal_actions() == ["9S 0:T70-T7", "9S 0:T70-H4", "TD 0:T70-T8"]
    s = position({0: ["T3"]}, ["9S"])
    assert s.legal_actions() == ["9S 0:T3-T12"]  # 9 steps after the in-spot do not fit
    s = position({0: ["T1", "H2"]}, ["4D"])
    assert s.legal_actions() == ["4D 0:T1-T5"]  # H2 is taken


def test_PJ_6_3_a_peg_in_home_moves_only_within_home_by_an_exact_count():
    s = position({0: ["H2"]}, ["3C", "4C", "2C"])
    assert s.legal_actions() == ["2C 0:H2-H4", "3C 0:H2-H5"]
    s = position({0: ["H2", "H4"]}, ["3C", "AH"])
    assert s.legal_actions() == ["AH 0:S-T8", "AH 0:H2-H3", "AH 0:H4-H5"]


def test_PJ_6_4_a_peg_that_has_just_come_out_cannot_enter_home():
    s = position({0: ["T8"]}, ["TD", "5S"])
    assert s.legal_actions() == ["5S 0:T8-T13", "TD 0:T8-T18"]


def test_PJ_6_4_a_peg_backed_behind_its_in_spot_may_enter_home():
    s = PegsAndJokersState.from_position(
        4, pegs={0: ["T8"]}, hands={0: ["8C", "5D"], 1: ["2C"] * 5, 2: ["2C"] * 5, 3: ["2C"] * 5},
        to_act=0, draw_pile=["5H", "2H", "2H", "2H"],
    )
    s.apply("8C 0:T8-T0")
    for _ in range(3):
        s.apply(s.legal_actions()[0])
    assert s.to_act() == 0 and "5D 0:T0-H2" in s.legal_actions()  # T1, T2, T3, H1, H2


def test_PJ_6_4_a_peg_placed_by_a_joker_or_sent_to_its_in_spot_may_enter_home():
    s = position({0: ["T1"]}, ["4C"])  # e.g. after a joker jump onto T1
    assert "4C 0:T1-H2" in s.legal_actions()
    s = position({0: ["T30"], 2: ["T34"]}, ["4C"])
    s.apply("4C 0:T30-T34")
    assert pegs_of(s, 2) == ["S", "S", "S", "S", "T39"]
    s2 = position({2: ["T39"]}, ["AH"], to_act=2)
    assert s2.legal_actions() == ["AH 2:S-T44", "AH 2:T39-T40", "AH 2:T39-H1"]


# -- PJ-7 hitting -----------------------------------------------------------------------------


def test_PJ_7_1_an_opponent_that_is_hit_goes_back_to_its_start():
    s = position({0: ["T20"], 1: ["T25", "H1"]}, ["5C"])
    pegs, ev = after(s, "5C 0:T20-T25")
    assert pegs[0] == ["S", "S", "S", "S", "T25"]
    assert pegs[1] == ["S", "S", "S", "S", "H1"]
    assert ev["parts"][0]["hits"] == [[1, "T25", "S"]]


def test_PJ_7_2_a_teammate_that_is_hit_goes_to_its_in_spot():
    s = position({0: ["T30"], 2: ["T34"]}, ["4C"])
    pegs, ev = after(s, "4C 0:T30-T34")
    assert pegs[2] == ["S", "S", "S", "S", "T39"]
    assert ev["parts"][0]["hits"] == [[2, "T34", "T39"]]


def test_PJ_7_2_ruling_the_in_spot_holding_a_peg_of_the_team_makes_the_move_illegal():
    s = position({0: ["T30", "T39"], 2: ["T34"]}, ["4C"])  # own peg on seat 2's in-spot
    assert "4C 0:T30-T34" not in s.legal_actions()
    s = position({0: ["T30"], 2: ["T34", "T39"]}, ["4C"])  # seat 2's own peg there
    assert "4C 0:T30-T34" not in s.legal_actions()
    with pytest.raises(IllegalAction):
        s.apply("4C 0:T30-T34")


def test_PJ_7_2_ruling_the_mover_landing_on_the_in_spot_itself_is_illegal():
    s = position({0: ["T35"], 2: ["T39"]}, ["4C", "JK"])
    legal = s.legal_actions()
    assert "4C 0:T35-T39" not in legal and "JK 0:S-T39" not in legal and "JK 0:T35-T39" not in legal


def test_PJ_7_2_ruling_an_opponent_on_the_in_spot_goes_to_its_start():
    s = position({0: ["T30"], 2: ["T34"], 3: ["T39"]}, ["4C"])
    pegs, ev = after(s, "4C 0:T30-T34")
    assert ev["parts"][0]["hits"] == [[2, "T34", "T39"], [3, "T39", "S"]]
    assert pegs[2] == ["S", "S", "S", "S", "T39"] and pegs[3] == ["S"] * 5


def test_PJ_7_2_ruling_an_in_spot_the_mover_just_left_is_free():
    s = position({0: ["T39"], 2: ["T44"]}, ["5C"])
    pegs, ev = after(s, "5C 0:T39-T44")
    assert ev["parts"][0]["hits"] == [[2, "T44", "T39"]]
    assert pegs[0] == ["S", "S", "S", "S", "T44"] and pegs[2] == ["S", "S", "S", "S", "T39"]


# -- PJ-8 finished players ------------------------------------------------------------------------


def test_PJ_8_a_finished_player_moves_the_nearest_teammate_clockwise():
    s = position({0: ALL_HOME, 2: ["T40"]}, ["3C"])
    assert s.colour == 2 and s.observe(0)["colour"] == 2
    assert s.legal_actions() == ["3C 2:T40-T43"]
    events = s.apply("3C 2:T40-T43")
    assert events[0].data["seat"] == 0 and events[0].data["colour"] == 2
    assert pegs_of(s, 2) == ["S", "S", "S", "S", "T43"]
    # six players: seats 0 and 2 done, so seat 0 moves seat 4's pegs
    s = position({0: ALL_HOME, 2: ALL_HOME, 4: ["T80"]}, ["KD", "3S"], players=6)
    assert s.colour == 4 and s.legal_actions() == ["3S 4:T80-T83", "KD 4:T80-T90"]
    # eight players: seat 6 (two seats on) is nearer to seat 4 than seat 0 is
    s = position({4: ALL_HOME, 6: ["T112"], 0: ["T5"]}, ["2S"], to_act=4, players=8)
    assert s.colour == 6 and s.legal_actions() == ["2S 6:T112-T114"]


def test_PJ_8_start_come_out_in_spot_and_home_are_the_teammates():
    s = position({0: ALL_HOME, 2: ["T37", "H3"]}, ["AS", "4D"])
    assert s.legal_actions() == [
        "4D 2:T37-T41", "4D 2:T37-H2",  # seat 2's in-spot T39, seat 2's home
        "AS 2:S-T44", "AS 2:T37-T38", "AS 2:H3-H4",
    ]


def test_PJ_8_the_forced_move_rule_applies_to_the_teammates_colour():
    s = position({0: ALL_HOME, 1: ["T20"]}, ["2C", "JK"])  # seat 2 all in start
    assert s.legal_actions() == ["JK 2:S-T20", "discard 2C", "discard JK"]


def test_PJ_8_the_colour_stays_the_same_for_the_whole_turn():
    # the first part of the 7 brings seat 0's last peg home; the rest cannot switch to seat 2
    s = position({0: ["T2", "H2", "H3", "H4", "H5"], 2: ["T40"]}, ["7C"])
    assert s.legal_actions() == ["7C 0:T2-T9"]
    # and a 7 that fills seat 0's home is split between two of seat 0's pegs
    s = position({0: ["T2", "T0", "H3", "H4", "H5"], 2: ["T40"]}, ["7C"])
    assert "7C 0:T2-H2,0:T0-H1" in s.legal_actions()
    s.apply("7C 0:T2-H2,0:T0-H1")
    assert s.home[0] == 0b11111 and s.to_act() == 1
    for _ in range(3):  # seats 1, 2, 3
        s.apply(s.legal_actions()[0])
    assert s.to_act() == 0 and s.colour == 2


# -- PJ-9 end ----------------------------------------------------------------------------------------


def test_PJ_9_the_first_team_with_every_peg_home_wins_at_once():
    s = position({0: ["T2", "H2", "H3", "H4", "H5"], 2: ALL_HOME, 1: ["H1", "H2"], 3: ["H5"]}, ["2C"])
    events = s.apply("2C 0:T2-H1")
    end = events[-1].data
    assert end["type"] == "game_over" and end["status"] == "win" and end["winners"] == [0]
    assert end["scores"] == [10, 3] and end["reason"] == "all_pegs_home"
    out = s.outcome()
    assert {k: end[k] for k in out.to_json()} == out.to_json() and end["detail"]["turns"] == 1
    assert (out.status, out.winners, out.scores, out.reason) == ("win", (0,), (10, 3), "all_pegs_home")
    assert s.to_act() is None and s.legal_actions() == [] and s.is_over()
    with pytest.raises(IllegalAction):
        s.apply("2C 0:T2-H1")


def test_PJ_9_one_player_home_is_not_a_win_for_the_team():
    s = position({0: ["T2", "H2", "H3", "H4", "H5"]}, ["2C"])
    s.apply("2C 0:T2-H1")
    assert s.outcome() is None and s.to_act() == 1


def test_PJ_9_ruling_max_turns_ends_the_game_as_a_draw():
    state, _ = SPEC.new_game(1, {"players": 4, "max_turns": 5})
    rng = random.Random(1)
    for _ in range(5):
        assert state.outcome() is None
        events = state.apply(rng.choice(state.legal_actions()))
    out = state.outcome()
    assert out.status == "draw" and out.winners == () and out.reason == "max_turns"
    assert out.scores == (0, 0) and events[-1].data["type"] == "game_over"


# -- perft: known legal-move counts, counted by hand ---------------------------------------------------

PERFT = [
    # 1. All pegs in start.  AS: out (1).  KH: out (1).  5C 7D 8S 2H: nothing to move.  = 2
    (dict(pegs={}, hand=["AS", "KH", "5C", "7D", "8S", "2H"]), 2),
    # 2. T10, T30.  7C single: T10-T17, T30-T37 (2).  Splits x+(7-x), x = 1..6, T10 first:
    #    T11..T16 with T36..T31, nothing blocked (6); T30-first orders end alike (0).  = 8
    (dict(pegs={0: ["T10", "T30"]}, hand=["7C"]), 8),
    # 3. T1 (2 to the in-spot), H2.  4D: T1-T5; T1-H2 taken; H2+4 > H5 (1).
    #    3C: T1-T4, T1-H1, H2-H5 (3).  AH: S-T8, T1-T2, H2-H3 (3).  = 7
    (dict(pegs={0: ["T1", "H2"]}, hand=["4D", "3C", "AH"]), 7),
    # 4. Own T10 + 4 in start; seat 1 T30, seat 2 (team) T50, seat 3 on seat 2's in-spot T39.
    #    JK from S and from T10 onto T30, T39, T50 (T50: teammate to T39, seat 3 to start) = 6,
    #    only joker moves so every card may be discarded: + discard JK.  = 7
    (dict(pegs={0: ["T10"], 1: ["T30"], 2: ["T50"], 3: ["T39"]}, hand=["JK"]), 7),
    # 5. Own T39 (seat 2's in-spot) and T10; seat 1 T30; seat 2 T50.
    #    JK onto T30 from S, T10, T39 (3); onto T50 only from T39, which frees the in-spot (1).
    #    2C: T10-T12, T39-T41 (2).  A non-joker move exists: no discards.  = 6
    (dict(pegs={0: ["T39", "T10"], 1: ["T30"], 2: ["T50"]}, hand=["JK", "2C"]), 6),
    # 6. Own T10, T12; seat 1 T13, T17.  7H single: T12-T19 (T10 would pass T12) (1).
    #    T10 first: x=1 T11 then T12-T18; x>=2 blocked by T12 (1).
    #    T12 first: x=1 T13 hit, T10+6 passes T13 (0); x=2 T14, T10+5 passes T14 (0);
    #    x=3 T15 then T10-T14 (1); x=4 T16 then T10-T13 hit (1); x=5 T17 hit then T10-T12 (1);
    #    x=6 T18 then T10-T11 ends like T10-first x=1 (0).  = 5
    (dict(pegs={0: ["T10", "T12"], 1: ["T13", "T17"]}, hand=["7H"]), 5),
    # 7. Six players, seats 0 and 2 home, seat 4 T80 (its come-out).  KD: out onto own T80 no,
    #    T80-T90 (1).  3S: T80-T83 (1).  = 2
    (dict(pegs={0: ALL_HOME, 2: ALL_HOME, 4: ["T80"]}, hand=["KD", "3S"], players=6), 2),
    # 8. T70 (5 to the in-spot), H5.  9S: T70-T7, T70-H4 (2).  TD: T70-T8; H5 taken (1).
    #    H5 cannot move.  = 3
    (dict(pegs={0: ["T70", "H5"]}, hand=["9S", "TD"]), 3),
    # 9. Eight players, seat 5 to act: T95 (its in-spot, 18*5+3 = 93, is 142 steps on),
    #    seat 2 (opponent) T97.  8S: T95-T87 (1).  2C: T95-T97 hit (1).  AD: S-T98, T95-T96 (2).  = 4
    (dict(pegs={5: ["T95"], 2: ["T97"]}, hand=["8S", "2C", "AD"], to_act=5, players=8), 4),
]


@pytest.mark.parametrize("setup,count", PERFT, ids=[f"perft{i + 1}" for i in range(len(PERFT))])
def test_perft_counts(setup, count):
    assert len(position(**setup).legal_actions()) == count


# -- action text ------------------------------------------------------------------------------------------


def test_action_text_values():
    assert Action.from_text("KH 2:S-T44") == Play("KH", (Step(2, "S", "T44"),))
    assert Action.from_text("7C 0:T10-T11,0:T20-T25") == Play(
        "7C", (Step(0, "T10", "T11"), Step(0, "T20", "T25"))
    )
    assert Action.from_text("JK 3:T60-T12") == Play("JK", (Step(3, "T60", "T12"),))
    assert Action.from_text("5S 0:T1-H2") == Play("5S", (Step(0, "T1", "H2"),))
    assert Action.from_text("discard 5S") == Discard("5S")
    assert Action.from_text("discard JK") == Discard("JK")


@pytest.mark.parametrize("text", [
    "", "KH", "KH 2:S-T44 ", " KH 2:S-T44", "KH 2:S-T44x", "KH 02:S-T44", "KH 2:S-T044",
    "KH 2:S-H6", "KH 2:S-H0", "XX 2:S-T4", "BJ 2:S-T4", "5S 0:T1-T2,0:T3-T4",
    "7C 0:T1-T2,0:T3-T4,0:T5-T6", "discard", "discard ZZ", "discard 5S 5S", "KH 2:s-t44",
    "KH 2:T-T44", "44T-S:2 HK", "pass", "7C 0:T1-T2;0:T3-T4",
])
def test_malformed_action_text_is_invalid(text):
    with pytest.raises(InvalidAction):
        Action.from_text(text)
    s = position({0: ["T10"]}, ["KH", "5S", "7C"])
    with pytest.raises(InvalidAction):
        s.apply(text)


@pytest.mark.parametrize("text", [
    "KH 9:S-T8", "KH 1:S-T26", "KH 0:S-T999", "KH 0:T10-T21", "AS 0:S-T8", "discard KH",
    "5S 0:T10-T16", "KH 0:T10-H5",
])
def test_well_formed_but_illegal_action_is_refused_without_change(text):
    s = position({0: ["T10"]}, ["KH", "5S", "7C"])
    before = (s.legal_actions(), s.peg_texts(), list(s.hands[0]))
    with pytest.raises(IllegalAction):
        s.apply(text)
    assert (s.legal_actions(), s.peg_texts(), list(s.hands[0])) == before


# -- events and construction ------------------------------------------------------------------------------


def test_public_move_events_are_enough_to_redraw_the_board():
    from referee.replay.pegs_and_jokers import _Board

    for players in (4, 8):
        state, events = SPEC.new_game(31, {"players": players})
        board = _Board(players)
        rng = random.Random(31)
        while state.to_act() is not None:
            for e in state.apply(rng.choice(state.legal_actions())):
                if e.to is None and e.data["type"] == "move":
                    board.apply_move(e.data)
        assert [sorted(p, key=_order) for p in board.pegs] == state.peg_texts()
        assert events and state.outcome().status in ("win", "draw")


def _order(text):
    return (-1, 0) if text == "S" else (0, int(text[1:])) if text[0] == "T" else (1, int(text[1:]))


def test_from_position_checks_its_input():
    with pytest.raises(ValueError):
        position({0: ["T5"], 1: ["T5"]}, ["2C"])
    with pytest.raises(ValueError):
        position({0: ALL_HOME, 2: ALL_HOME}, ["2C"])
    with pytest.raises(ValueError):
        position({0: ["T5"]}, [])
    with pytest.raises(KeyError):
        position({0: ["T72"]}, ["2C"])
    s = position({0: ["T5", "H1"]}, ["2C"], turn=17)
    assert s.observe(0)["turn"] == 18 and s.dealer == 3 and len(s.draw_pile) == 161


def test_clone_is_independent_and_keeps_the_random_stream():
    state, _ = SPEC.new_game(12, {"players": 4})
    rng = random.Random(12)
    for _ in range(150):
        state.apply(rng.choice(state.legal_actions()))
    copy = state.clone()
    actions = []
    r1 = random.Random(1)
    ev1 = []
    for _ in range(200):
        if state.to_act() is None:
            break
        a = r1.choice(state.legal_actions())
        actions.append(a)
        ev1 += [e.data for e in state.apply(a)]
    ev2 = []
    for a in actions:
        ev2 += [e.data for e in copy.apply(a)]
    assert ev1 == ev2
