"""Standings from hand-built results (standings.py): pure."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.results import GameFault, GameResult
from tournaments.standings import compute_standings, placing, score_differences

from .helpers import result


def row(standings, name):
    return next(e for e in standings.to_json()["entrants"] if e["name"] == name)


def test_wins_draws_losses_and_score_difference_per_entrant():
    ab = ("a", "b")
    results = [  # two duplicate units: deal 0 and deal 1, each in both seatings
        result(0, ("a", "b"), (100, 40), deal=0, arrangement=0, pairing=ab),
        result(1, ("b", "a"), (30, 50), deal=0, arrangement=1, pairing=ab),
        result(2, ("a", "b"), (20, 20), deal=1, arrangement=0, pairing=ab),  # draw
        result(3, ("b", "a"), (90, 10), deal=1, arrangement=1, pairing=ab),
    ]
    s = compute_standings(["a", "b"], 2, results)
    a, b = row(s, "a"), row(s, "b")
    assert (a["games"], a["wins"], a["draws"], a["losses"]) == (4, 2, 1, 1)
    assert (b["wins"], b["draws"], b["losses"]) == (1, 1, 2)
    assert a["score_diff"]["value"] == pytest.approx((60 + 20 + 0 - 80) / 4)
    assert a["score_diff"]["value"] == -b["score_diff"]["value"]
    assert a["score_diff"]["lo"] < a["score_diff"]["value"] < a["score_diff"]["hi"]
    assert a["win_rate"]["value"] == 0.5 and 0 < a["win_rate"]["lo"] < 0.5 < a["win_rate"]["hi"] < 1
    assert a["rank"] == 1 and a["rating"]["mu"] > b["rating"]["mu"]


def test_forfeits_are_counted_by_reason_and_left_out_of_score_differences():
    crash = GameFault(seat=1, team=1, entrant="b", reason="exited", message="exit code 3")
    slow = GameFault(seat=0, team=0, entrant="b", reason="timeout", message="no reply")
    ab = ("a", "b")
    results = [  # deal 0 (both seatings forfeited by b), then deal 1 played out
        result(0, ("a", "b"), (0, 0), winners=(0,), fault=crash, deal=0, arrangement=0, pairing=ab),
        result(1, ("b", "a"), (0, 0), winners=(1,), fault=slow, deal=0, arrangement=1, pairing=ab),
        result(2, ("a", "b"), (10, 30), deal=1, arrangement=0, pairing=ab),
        result(3, ("b", "a"), (30, 10), deal=1, arrangement=1, pairing=ab),
    ]
    s = compute_standings(["a", "b"], 2, results)
    a, b = row(s, "a"), row(s, "b")
    assert b["forfeits"] == 2 and b["forfeits_by_reason"] == {"exited": 1, "timeout": 1}
    assert a["forfeits"] == 0 and a["opponent_forfeits"] == 2
    assert (a["wins"], a["losses"]) == (2, 2)
    assert a["score_diff"]["units"] == 1 and a["score_diff"]["value"] == -20
    # the forfeited unit still counts for Elo: a won both games of it, lost both of the other
    assert a["elo"]["units"] == 2 and a["elo"]["score"] == 0.5
    assert s.to_json()["endings"] == {"forfeit: exited": 1, "forfeit: timeout": 1, "win": 2}


def test_aborted_games_count_as_draws_and_are_reported():
    s = compute_standings(["a", "b"], 2, [result(0, ("a", "b"), (3, 9), winners=(), status="aborted")])
    a = row(s, "a")
    assert (a["draws"], a["aborted"]) == (1, 1)


def test_three_team_placing_orders_losers_by_score():
    r = result(0, ("a", "b", "c"), (21, 5, 12))
    assert placing(r) == [1, 3, 2]
    assert score_differences(r) == [21 - 8.5, 5 - 16.5, 12 - 13]
    tie = result(1, ("a", "b", "c"), (21, 5, 5))
    assert placing(tie) == [1, 2, 2]
    forfeit = result(2, ("a", "b", "c"), (0, 0, 0), winners=(0, 2),
                     fault=GameFault(1, 1, "b", "timeout", ""))
    assert placing(forfeit) == [1, 2, 1]
    s = compute_standings(["a", "b", "c"], 3, [r])
    h = s.to_json()["head_to_head"]
    assert h["c"]["b"] == {"games": 1, "wins": 1, "draws": 0, "losses": 0}
    assert h["b"]["c"]["losses"] == 1 and h["a"]["b"]["wins"] == 1
    assert [e["name"] for e in s.to_json()["entrants"]] == ["a", "c", "b"]


def test_paired_comparison_uses_only_complete_fault_free_deals():
    results = [
        # deal 0: a scores 60 then 20 in the two seatings on the same cards, b scores 40 then 30
        result(0, ("a", "b"), (60, 40), deal=0, arrangement=0, pairing=("a", "b")),
        result(1, ("b", "a"), (30, 20), deal=0, arrangement=1, pairing=("a", "b")),
        # deal 1: only one seating played so far
        result(2, ("a", "b"), (99, 0), deal=1, arrangement=0, pairing=("a", "b")),
        # deal 2: complete but with a forfeit
        result(3, ("a", "b"), (0, 0), winners=(0,), deal=2, arrangement=0, pairing=("a", "b"),
               fault=GameFault(1, 1, "b", "exited", "")),
        result(4, ("b", "a"), (10, 5), deal=2, arrangement=1, pairing=("a", "b")),
    ]
    [p] = compute_standings(["a", "b"], 2, results).to_json()["paired"]
    assert (p["a"], p["b"], p["deals"], p["excluded_deals"]) == ("a", "b", 1, 1)
    assert p["mean_diff"]["value"] == ((60 - 40) + (20 - 30)) / 2
    assert (p["a_better"], p["equal"], p["b_better"]) == (1, 0, 0)


def test_paired_comparison_for_three_teams_needs_all_six_seatings():
    import itertools

    perms = list(itertools.permutations(("a", "b", "c")))
    score = {"a": 10, "b": 20, "c": 15}
    results = [result(i, teams, tuple(score[n] + i for n in teams), deal=0, arrangement=i,
                      pairing=("a", "b", "c")) for i, teams in enumerate(perms)]
    paired = compute_standings(["a", "b", "c"], 3, results).to_json()["paired"]
    assert [(p["a"], p["b"], p["mean_diff"]["value"]) for p in paired] == [
        ("a", "b", -10), ("a", "c", -5), ("b", "c", 5)]
    assert compute_standings(["a", "b", "c"], 3, results[:5]).to_json()["paired"] == []


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32))
def test_standings_depend_on_the_set_of_results_not_their_order(seed):
    rng = random.Random(seed)
    names = ["a", "b", "c"]
    results = []
    for i in range(20):
        teams = tuple(rng.sample(names, 2))
        results.append(result(i, teams, (rng.randint(0, 9), rng.randint(0, 9)), deal=i // 2,
                              arrangement=i % 2, pairing=tuple(sorted(teams))))
    shuffled = results[:]
    rng.shuffle(shuffled)
    one = json.dumps(compute_standings(names, 2, results).to_json())
    two = json.dumps(compute_standings(names, 2, shuffled).to_json())
    assert one == two


def test_standings_of_no_games_have_every_entrant_and_no_intervals():
    data = compute_standings(["a", "b"], 2, [], games_total=4).to_json()
    assert data["complete"] is False and data["games_played"] == 0
    assert [e["games"] for e in data["entrants"]] == [0, 0]
    assert data["entrants"][0]["win_rate"]["value"] is None


def test_standings_say_how_the_games_ran_and_warn_when_bots_were_not_isolated():
    import dataclasses

    from tournaments.report import sandbox_notes

    boxed = [dataclasses.replace(result(i, ("a", "b"), (10, 5)), sandbox="bwrap") for i in range(3)]
    s = compute_standings(["a", "b"], 2, boxed).to_json()
    assert s["sandbox"] == {"games": {"bwrap": 3}, "network": [], "isolated": True}
    assert sandbox_notes(s["sandbox"]) == []
    mixed = boxed + [result(3, ("b", "a"), (1, 2))]  # a game that ran with --sandbox off
    s = compute_standings(["a", "b"], 2, mixed, network=["b"]).to_json()
    assert s["sandbox"] == {"games": {"bwrap": 3, "off": 1}, "network": ["b"], "isolated": False}
    assert sandbox_notes(s["sandbox"]) == ["WARNING: 1 game ran with bots NOT sandboxed",
                                           "WARNING: network allowed for b"]


def test_decision_times_are_kept_per_entrant_and_out_of_standings_json():
    from dataclasses import replace

    from tournaments.standings import compute_standings, decision_times

    base = GameResult(game_id=0, pairing=("a", "b"), deal=0, arrangement=0, teams=("a", "b"), seed=1,
                      status="win", winners=(0,), scores=(10.0, 0.0))
    one = replace(base, times=((10, 50.0, 9.0), (5, 100.0, 40.0)))
    two = replace(base, game_id=1, arrangement=1, teams=("b", "a"), winners=(1,), scores=(0.0, 10.0),
                  times=((5, 20.0, 4.0), (10, 150.0, 30.0)))
    untimed = replace(base, game_id=2, deal=1)  # a line written before times existed
    times = decision_times(["a", "b"], [one, two, untimed])
    assert times == {"a": (20, 10.0, 30.0), "b": (10, 12.0, 40.0)}
    with_times = compute_standings(["a", "b"], 2, [one, two]).to_json()
    without = compute_standings(["a", "b"], 2, [replace(one, times=None), replace(two, times=None)]).to_json()
    assert with_times == without
    assert GameResult.from_json(one.to_json()) == one


# ---------------------------------------------------------------------------
# Ranks and ties (docs/tournaments.md, "Ranks and ties")


def round_robin(names, deals, winner):
    """Every pairing of ``names`` on ``deals`` duplicate deals, both seatings; ``winner(a, b, deal,
    arrangement)`` names the game's winner."""
    import itertools

    games = []
    for a, b in itertools.combinations(names, 2):
        for deal in range(deals):
            for arrangement, teams in enumerate(((a, b), (b, a))):
                w = winner(a, b, deal, arrangement)
                scores = (30, 10) if teams[0] == w else (10, 30)
                games.append(result(len(games), teams, scores, deal=deal, arrangement=arrangement, pairing=(a, b)))
    return games


def labels(data):
    return [(e["name"], e["rank_label"]) for e in data["entrants"]]


def test_a_bot_that_lost_all_12_of_its_games_does_not_share_a_rank_with_the_bots_that_beat_it():
    # Four entrants, 2 deals per pairing: 12 games each.  "crashes" loses every game; the other
    # three win one seating of each deal against each other (6-0-6 apiece against the rest).
    def winner(a, b, deal, arrangement):
        if "crashes" in (a, b):
            return a if b == "crashes" else b
        return (a, b)[arrangement]

    names = ["crashes", "p", "q", "r"]
    data = compute_standings(names, 2, round_robin(names, 2, winner)).to_json()
    crashes = data["entrants"][-1]
    assert crashes["name"] == "crashes" and (crashes["games"], crashes["losses"]) == (12, 12)
    assert crashes["rank_label"] == "4" and crashes["tied"] is False
    # the three that beat it cannot be told apart: they share first place
    assert sorted(labels(data)[:3]) == [("p", "=1"), ("q", "=1"), ("r", "=1")]
    # the order is by points per game, which the table's score shows
    assert [e["points"] for e in data["entrants"]] == [8.0, 8.0, 8.0, 0.0]
    assert [e["score"] for e in data["entrants"]] == [pytest.approx(8 / 12)] * 3 + [0.0]


def test_zero_of_twelve_against_a_single_opponent_and_a_single_game():
    data = compute_standings(["a", "b"], 2, round_robin(["a", "b"], 6, lambda a, b, d, k: b)).to_json()
    assert labels(data) == [("b", "1"), ("a", "2")]
    one = compute_standings(["a", "b"], 2, [result(0, ("a", "b"), (10, 30), pairing=("a", "b"))]).to_json()
    assert labels(one) == [("b", "1"), ("a", "2")]  # beaten in the only game they played


def test_equal_results_tie_and_unseparated_neighbours_tie():
    even = compute_standings(["a", "b"], 2, round_robin(["a", "b"], 4, lambda a, b, d, k: (a, b)[k])).to_json()
    assert sorted(labels(even)) == [("a", "=1"), ("b", "=1")]
    # a wins 5 of 8 games (b wins the first seating of deals 0-2): ahead, but not told apart on 4 units
    close = compute_standings(["a", "b"], 2, round_robin(
        ["a", "b"], 4, lambda a, b, d, k: b if k == 0 and d < 3 else a)).to_json()
    assert [e["name"] for e in close["entrants"]] == ["a", "b"] and labels(close) == [("a", "=1"), ("b", "=1")]


def test_a_tie_never_joins_two_entrants_the_results_tell_apart():
    # a beats b in 3 of 4 games, b beats c in 3 of 4, but a beats c in all 4: a ~ b and b ~ c,
    # yet a and c are told apart, so they cannot share a rank through b.
    def winner(x, y, deal, arrangement):
        pair = {x, y}
        if pair == {"a", "c"}:
            return "a"
        top = "a" if pair == {"a", "b"} else "b"
        other = (pair - {top}).pop()
        return other if (deal, arrangement) == (0, 0) else top

    data = compute_standings(["a", "b", "c"], 2, round_robin(["a", "b", "c"], 2, winner)).to_json()
    by_label: dict[str, list[str]] = {}
    for name, label in labels(data):
        by_label.setdefault(label, []).append(name)
    assert not any({"a", "c"} <= set(group) for group in by_label.values())
    assert [e["name"] for e in data["entrants"]] == ["a", "b", "c"]


def test_schmier_points_count_the_placing_among_the_losers():
    import itertools

    names = ("a", "b", "c")
    points = {"a": 60, "b": 40, "c": 20}
    games = [result(i, teams, tuple(points[t] for t in teams), deal=0, arrangement=i, pairing=names)
             for i, teams in enumerate(itertools.permutations(names))]
    data = compute_standings(list(names), 3, games).to_json()
    assert [(e["name"], e["score"], e["rank_label"]) for e in data["entrants"]] == [
        ("a", 1.0, "1"), ("b", 0.5, "2"), ("c", 0.0, "3")]  # b was second every time: ahead of c


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32))
def test_ranks_follow_the_points_and_no_tie_holds_a_dominance(seed):
    rng = random.Random(seed)
    names = ["a", "b", "c", "d"]
    strength = {n: rng.random() for n in names}
    games = round_robin(names, rng.randint(1, 4),
                        lambda a, b, d, k: a if rng.random() < strength[a] / (strength[a] + strength[b] + 1e-9) else b)
    data = compute_standings(names, 2, games).to_json()
    entrants = data["entrants"]
    scores = [e["score"] for e in entrants]
    assert scores == sorted(scores, reverse=True)
    ranks = [e["rank"] for e in entrants]
    assert ranks == sorted(ranks) and ranks[0] == 1
    for i, e in enumerate(entrants):
        assert e["rank"] == i + 1 or e["tied"]
        for f in entrants[i + 1:]:
            h = data["head_to_head"][e["name"]][f["name"]]
            if e["rank"] == f["rank"]:  # tied: never when one beat the other in every game and scored more
                assert not (h["games"] and h["wins"] == h["games"] and e["score"] > f["score"])
            if e["score"] == f["score"]:
                assert e["rank"] == f["rank"]


# ---------------------------------------------------------------------------
# The live leader lines (report.live_lines / LiveSummary): the standings' order


def leader_rows(lines):
    """(rank label, name, score %) of each leader line."""
    import re

    rows = []
    for line in lines:
        m = re.match(r"\s*(=?\d+) (\S+)\s+(\d+\.\d%|–)\s+Elo ", line)
        if m:
            rows.append((m[1], m[2], None if m[3] == "–" else float(m[3][:-1])))
    return rows


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 40))
def test_leader_lines_list_the_entrants_in_the_standings_order_with_the_score_they_are_ranked_by(seed, played):
    # Part of a round robin (as mid-run, deals still missing a seating): the shown score is
    # points per game, the table's order, so it never goes up down the list.
    from tournaments.report import live_lines

    rng = random.Random(seed)
    names = ["a", "b", "c", "d"]
    games = round_robin(names, 4, lambda a, b, d, k: a if rng.random() < 0.5 else b)
    rng.shuffle(games)
    data = compute_standings(names, 2, games[:played]).to_json()
    rows = leader_rows(live_lines(data, top=4))
    assert [(label, name) for label, name, _ in rows] == [(e["rank_label"], e["name"]) for e in data["entrants"]]
    shown = [-1.0 if score is None else score for _, _, score in rows]  # "–": yet to play, last
    assert shown == sorted(shown, reverse=True)
    assert shown == [-1.0 if e["score"] is None else round(100 * e["score"], 1) for e in data["entrants"]]


async def test_quiet_leader_lines_at_the_end_of_a_run_are_the_final_standings(tmp_path):
    import io

    from tournaments.report import LiveSummary, PlainProgress
    from tournaments.runner import run_tournament

    from .helpers import FakePlay
    from .test_runner import tournament

    t = tournament(tmp_path / "out", names=("bot1", "bot5", "bot3", "bot9", "bot2"))
    stream = io.StringIO()
    progress = PlainProgress(stream, live=LiveSummary(t, {}), game=t.game, output=t.output)
    run = await run_tournament(t, play=FakePlay(), progress=progress)
    last = stream.getvalue().split("games 40/40")[-1].splitlines()[1:]
    final = run.standings.to_json()["entrants"]
    assert [(label, name) for label, name, _ in leader_rows(last)] == [(e["rank_label"], e["name"])
                                                                       for e in final[:4]]
    assert last[-1].strip() == "and 1 more"
