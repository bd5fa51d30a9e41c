"""Pairings, arrangements, game ids and seeds (schedule.py): pure."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.schedule import Shape, bot_seed, deal_seed, stable_hash
from tournaments.schedule import schedule as schedule_of_history

NAMES = ["a", "b", "c", "d"]
SECRET = bytes(range(32))
OTHER = bytes(32)
# HMAC-SHA256(SECRET, "referee-deal-v2\x1f3\x1frandom-a\x1frandom-b\x1f0"), top 63 bits
PINNED_DEAL_SEED = 6720021277586714034


def schedule(names, num_teams, games_per_pairing, tournament_seed, secret):
    """The schedule of a round robin that never grew."""
    return schedule_of_history((Shape(tuple(names), games_per_pairing),), num_teams, tournament_seed, secret)


def total_games(num_entrants, num_teams, games_per_pairing):
    return math.comb(num_entrants, num_teams) * math.factorial(num_teams) * games_per_pairing


def test_two_team_round_robin_plays_every_pair_in_both_seatings_on_each_deal():
    games = schedule(NAMES, 2, 3, tournament_seed=5, secret=SECRET)
    assert len(games) == 6 * 3 * 2 == total_games(4, 2, 3)
    per_pairing = Counter(g.pairing for g in games)
    assert set(per_pairing) == set(itertools.combinations(NAMES, 2))
    assert set(per_pairing.values()) == {6}
    for (pairing, _deal), group in itertools.groupby(games, key=lambda g: g.deal_key):
        group = list(group)
        assert sorted(g.teams for g in group) == sorted(itertools.permutations(pairing))
        assert len({g.seed for g in group}) == 1, "rivals must hold the same cards"


def test_three_team_round_robin_plays_every_triple_in_all_six_seatings():
    games = schedule(NAMES, 3, 1, tournament_seed=0, secret=SECRET)
    assert len(games) == math.comb(4, 3) * 6
    by_deal = {}
    for g in games:
        by_deal.setdefault(g.deal_key, []).append(g)
    for (pairing, _), group in by_deal.items():
        assert {g.teams for g in group} == set(itertools.permutations(pairing))


def test_game_ids_are_positions_and_deals_come_deal_major():
    games = schedule(NAMES, 2, 2, tournament_seed=1, secret=SECRET)
    assert [g.id for g in games] == list(range(len(games)))
    first_half = games[: len(games) // 2]
    assert {g.deal for g in first_half} == {0}, "a half-played tournament has met every pairing"


def test_team_of_seat_is_seat_mod_teams():
    g = schedule(["x", "y", "z"], 3, 1, tournament_seed=0, secret=SECRET)[1]
    assert g.seat_entrants(6) == (g.teams * 2)
    g2 = schedule(["x", "y"], 2, 1, tournament_seed=0, secret=SECRET)[1]
    assert g2.seat_entrants(8) == ("y", "x") * 4  # Pegs and Jokers with 8 players


def test_deal_seeds_differ_between_deals_and_pairings_and_tournament_seeds():
    seeds = {g.seed for g in schedule(NAMES, 2, 5, tournament_seed=9, secret=SECRET)}
    assert len(seeds) == 6 * 5
    assert deal_seed(1, SECRET, ("a", "b"), 0) != deal_seed(2, SECRET, ("a", "b"), 0)


def test_another_secret_deals_other_cards_on_the_same_schedule():
    mine = schedule(NAMES, 2, 3, tournament_seed=5, secret=SECRET)
    other = schedule(NAMES, 2, 3, tournament_seed=5, secret=OTHER)
    public = lambda g: (g.id, g.pairing, g.deal, g.arrangement, g.teams)  # noqa: E731
    assert [public(g) for g in mine] == [public(g) for g in other]
    assert not {g.seed for g in mine} & {g.seed for g in other}
    assert [g.seed for g in schedule(NAMES, 2, 3, tournament_seed=5, secret=SECRET)] == [g.seed for g in mine]


def test_a_secret_of_the_wrong_length_is_refused():
    with pytest.raises(ValueError, match="32 bytes"):
        deal_seed(1, b"short", ("a", "b"), 0)


def test_seeds_are_stable_across_runs_and_machines():
    # SHA-256 based: changing these values breaks the resume of old tournaments.
    assert stable_hash("x", 1) == stable_hash("x", 1)
    assert deal_seed(3, SECRET, ("random-a", "random-b"), 0) == deal_seed(3, SECRET, ("random-b", "random-a"), 0)
    assert deal_seed(3, SECRET, ("random-a", "random-b"), 0) == PINNED_DEAL_SEED
    assert 0 <= bot_seed(123, 2, "bot") < 2**63


def test_bot_seeds_differ_by_seat_and_entrant():
    assert len({bot_seed(7, seat, name) for seat in range(4) for name in "ab"}) == 8


@given(st.integers(2, 7), st.integers(2, 3), st.integers(1, 3), st.integers(0, 2**64))
def test_schedule_size_and_seeds_do_not_depend_on_entrant_order(n, k, gpp, seed):
    if n < k:
        return
    names = [f"e{i}" for i in range(n)]
    games = schedule(names, k, gpp, seed, SECRET)
    assert len(games) == total_games(n, k, gpp)
    reordered = schedule(list(reversed(names)), k, gpp, seed, SECRET)
    key = lambda g: (frozenset(g.pairing), g.deal)  # noqa: E731
    assert {key(g): g.seed for g in games} == {key(g): g.seed for g in reordered}
    # every entrant sits on every team equally often
    seats = Counter((name, t) for g in games for t, name in enumerate(g.teams))
    assert len(set(seats.values())) == 1


# -- a run that grows (schedule.plan over a history of shapes) ---------------------


def test_a_grown_schedule_keeps_every_old_game_under_its_id_and_appends_the_new_ones():
    from tournaments.schedule import plan

    first = Shape(("a", "b", "c"), 1)
    history = (first, Shape(("a", "b", "c", "d"), 1), Shape(("a", "b", "c", "d"), 3, ()))
    old = plan(history[:1], 2)
    grown = plan(history, 2)
    assert grown[: len(old)] == old
    assert [g.id for g in grown] == list(range(len(grown))) == list(range(6 * 3 * 2))
    assert all("d" in g.teams for g in grown[6:12]) and {g.deal for g in grown[12:]} == {1, 2}
    direct = schedule_of_history((history[-1],), 2, 5, SECRET)
    seeded = schedule_of_history(history, 2, 5, SECRET)
    assert sorted((g.teams, g.deal, g.seed) for g in seeded) == sorted((g.teams, g.deal, g.seed) for g in direct)


def test_growth_problems_name_what_a_shape_would_drop():
    from tournaments.schedule import growth_problems

    old = Shape(("a", "b", "c"), 2)
    assert growth_problems(old, Shape(("a", "b", "c", "d"), 3), 2) == []
    assert growth_problems(Shape(("a", "b", "c"), 2, ("a",)), old, 2) == []
    assert growth_problems(old, Shape(("a", "b"), 2), 2) == ["entrant 'c' removed"]
    assert growth_problems(old, Shape(("a", "b", "c"), 1), 2) == [
        "deals per pairing (rounds x games_per_pairing) was 2, now 1"]
    assert growth_problems(old, Shape(("a", "b", "c"), 2, ("a",)), 2) == [
        "challengers were none (a round robin), now a: pairing b-c would no longer be played"]


def test_a_schedule_with_deal_seeds_uses_them_by_deal_index():
    games = schedule_of_history((Shape(("a", "b", "c"), 2),), 3, 5, SECRET, deal_seeds=(7, 8, 9))
    assert {g.deal: g.seed for g in games} == {0: 7, 1: 8}
    with pytest.raises(ValueError, match="need 2 deal seeds, got 1"):
        schedule_of_history((Shape(("a", "b", "c"), 2),), 3, 5, SECRET, deal_seeds=(7,))
