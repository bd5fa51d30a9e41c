"""Gauntlets: `format = "gauntlet"`, `challengers`, `referee run --gauntlet NAME`
(schedule.pairings, config._challengers, cli/run.py)."""

from __future__ import annotations

import itertools
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tournaments.config import ConfigError, parse, resolve
from tournaments.runner import run_tournament
from tournaments.schedule import Shape, schedule

from .helpers import SECRET, FakePlay
from .test_cli_run import assert_user_error, referee

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"
REFS = ("r1", "r2", "r3", "r4", "r5")


def gauntlet(names, challengers, num_teams, deals=2):
    return schedule((Shape(tuple(names), deals, tuple(challengers)),), num_teams, 1, SECRET)


def assert_duplicate(games, num_teams):
    by_deal = defaultdict(list)
    for g in games:
        by_deal[g.deal_key].append(g)
    for (pairing, _), group in by_deal.items():
        assert sorted(g.teams for g in group) == sorted(itertools.permutations(pairing)), "every seating"
        assert len({g.seed for g in group}) == 1, "one deal seed per deal of a pairing"
        assert len(group) == [1, 1, 2, 6][num_teams]


def test_one_challenger_meets_every_reference_and_the_references_never_meet():
    games = gauntlet(("v2", *REFS), ["v2"], 2)
    assert {frozenset(g.pairing) for g in games} == {frozenset({"v2", r}) for r in REFS}
    assert len(games) == 5 * 2 * 2
    assert_duplicate(games, 2)


def test_challengers_also_meet_each_other():
    games = gauntlet(("a", "b", *REFS), ["a", "b"], 2, deals=1)
    pairs = {frozenset(g.pairing) for g in games}
    assert frozenset({"a", "b"}) in pairs and len(pairs) == 1 + 2 * 5
    assert all(set(p) & {"a", "b"} for p in pairs)


def test_a_schmier_gauntlet_plays_every_triple_holding_a_challenger_in_all_six_seatings():
    games = gauntlet(("v2", *REFS), ["v2"], 3)
    triples = {frozenset(g.pairing) for g in games}
    assert triples == {frozenset({"v2", a, b}) for a, b in itertools.combinations(REFS, 2)}
    assert len(games) == 10 * 2 * 6
    assert_duplicate(games, 3)
    # each reference meets the challenger equally often
    seen = Counter(name for g in games for name in g.teams if name != "v2")
    assert set(seen.values()) == {len(games) * 2 // 5}


def test_a_gauntlet_is_a_round_robin_restricted_to_pairings_with_a_challenger():
    names = ("c", *REFS)
    full = schedule((Shape(names, 1),), 2, 1, SECRET)
    some = gauntlet(names, ["c"], 2, deals=1)
    assert {(g.teams, g.seed) for g in some} == {(g.teams, g.seed) for g in full if "c" in g.teams}


def settings(**overrides):
    data = {"game": "back-alley", "seed": 1, "games_per_pairing": 1, "output": "out", "format": "gauntlet",
            "challengers": ["v2"], "entrants": [{"name": n, "command": BOT} for n in ("v2", "r1", "r2", "r3")]}
    data.update(overrides)
    return data


async def test_a_gauntlet_tournament_plays_only_the_challengers_games(tmp_path):
    t = resolve(parse(settings(output=str(tmp_path / "out"))), tmp_path).with_secret(SECRET)
    run = await run_tournament(t, play=FakePlay())
    assert t.format == "gauntlet" and run.played == t.total_games() == 3 * 2
    assert all("v2" in r.teams for r in run.results.values())
    assert run.standings.games_played == run.standings.games_total == 6
    assert t.identity()["challengers"] == ["v2"] and t.identity()["format"] == "gauntlet"


@pytest.mark.parametrize(("overrides", "message"), [
    ({"challengers": []}, 'format = "gauntlet" needs challengers'),
    ({"challengers": ["v3"]}, "challenger 'v3' is not an entrant (entrants: v2, r1, r2, r3)"),
    ({"format": "round-robin"}, 'challengers are for format = "gauntlet"'),
    ({"format": "swiss"}, "format: Input should be 'round-robin' or 'gauntlet'"),
])
def test_bad_gauntlet_settings_are_one_line_errors(tmp_path, overrides, message):
    with pytest.raises(ConfigError) as caught:
        resolve(parse(settings(**overrides)), tmp_path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_gauntlet_flags_make_a_gauntlet_and_the_dry_run_plan_says_so(tmp_path):
    args = ["run", "--game", "schmier", "--dry-run", "--output", tmp_path / "out"]
    for name in ("v2", "r1", "r2", "r3", "r4"):
        args += ["-e", f"{name}={BOT}"]
    res = referee(*args, "--gauntlet", "v2", "-n", "2")
    assert res.returncode == 0, res.stderr
    assert "schmier gauntlet of v2: 5 entrants, 6 pairings x 2 deals x 6 seatings = 72 games" in res.stderr
    res = referee(*args, "--gauntlet", "v2", "--gauntlet", "r1")
    assert "schmier gauntlet of v2, r1: 5 entrants, 9 pairings x 1 deal x 6 seatings = 54 games" in res.stderr
    assert not (tmp_path / "out").exists(), "a dry run writes nothing"
    assert_user_error(referee(*args, "--gauntlet", "nobody"), "challenger 'nobody' is not an entrant")
