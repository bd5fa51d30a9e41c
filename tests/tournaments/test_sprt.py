"""The pentanomial GSPRT (sprt.py): fishtest's numbers, and its error rates by simulation."""

from __future__ import annotations

import functools
import math
import random

import pytest

from tournaments.elo import NELO_PER_T
from tournaments.sprt import SprtError, SprtRun, SprtSpec, llr, status

# LLR_normalized(elo0, elo1, [LL, LD, DD+WL, WD, WW]) as computed by fishtest's own
# server/fishtest/stats/LLRcalc.py (official-stockfish/fishtest b8eecff2, with scipy's brentq),
# run separately; copied here to 16 digits.
FISHTEST = [
    ((0, 5), [10, 20, 40, 25, 5], -0.12046210470369247),
    ((0, 5), [3, 0, 7, 9, 1], 0.08043662243653675),
    ((-1.75, 0.25), [104, 5150, 10712, 4883, 127], -1.9676216457653803),
    ((0, 2), [390, 16974, 36229, 16618, 365], -6.927551294366572),
    ((0, 2), [365, 16618, 36229, 16974, 390], 2.250367703548933),
    ((0, 5), [0, 0, 0, 0, 104], 2.094954527648188),
    ((0, 5), [0, 1, 2, 1, 0], -0.0008287514197286906),
    ((0, 10), [40, 120, 300, 160, 55], 2.31813973625746),
]


def pentanomial(counts):
    return {k / 2: c for k, c in enumerate(counts)}


@pytest.mark.parametrize(("elos", "counts", "expected"), FISHTEST)
def test_llr_equals_fishtests_llr_normalized(elos, counts, expected):
    assert llr(SprtSpec(*elos), pentanomial(counts), 2) == pytest.approx(expected, abs=1e-6)


def test_trinomial_is_the_one_game_unit():
    # fishtest LLR_normalized(0, 2, [L, D, W]) for the same run
    assert llr(SprtSpec(0, 2), {0: 36433, 0.5: 68692, 1: 36027}, 1) == pytest.approx(-5.6005693358216835, abs=1e-6)


def test_llr_matches_fastchess_published_values():
    # fastchess app/tests/sprt_test.cpp "normalized pentanomial 1" and "2" (to two decimals)
    assert llr(SprtSpec(0, 2), pentanomial([365, 16618, 36229, 16974, 390]), 2) == pytest.approx(2.25, abs=0.01)
    assert llr(SprtSpec(-1.75, 0.25), pentanomial([127, 4883, 10712, 5150, 104]), 2) == pytest.approx(3.01, abs=0.01)


def test_bounds_and_decisions():
    spec = SprtSpec(0, 5)
    assert spec.lower == pytest.approx(math.log(0.05 / 0.95)) and spec.upper == pytest.approx(math.log(0.95 / 0.05))
    assert spec.decision(3.0) == "H1" and spec.decision(-3.0) == "H0" and spec.decision(0.0) is None
    s = status(spec, "new", "old", [2.0] * 200, 2, games=401)
    assert s.decision == "H1" and s.units == 200 and s.games == 401 and s.distribution[2.0] == 200
    assert s.to_json(finished=True)["verdict"].startswith("H1 accepted: new is better than old")
    assert status(spec, "a", "b", [], 2, games=0).llr == 0.0


def test_parse():
    assert SprtSpec.parse("elo0=0,elo1=5") == SprtSpec(0, 5, 0.05, 0.05)
    assert SprtSpec.parse("elo0=-1, elo1=3, alpha=0.1,beta=0.2") == SprtSpec(-1, 3, 0.1, 0.2)
    for bad, words in [("elo0=5,elo1=0", "less than"), ("elo1=5", "both"), ("elo0=x,elo1=5", "not a number"),
                       ("elo0=0,elo1=5,alpha=1.2", "between"), ("elo0=0,elo1=5,gamma=1", "expected"),
                       ("elo0=0,elo0=1,elo1=5", "twice"), ("elo0=nan,elo1=5", "finite")]:
        with pytest.raises(SprtError, match=words):
            SprtSpec.parse(bad)


# ---------------------------------------------------------------------------
# Simulation: pentanomial draws straight from a known distribution.


def unit_probabilities(nelo: float, q: float = 0.2) -> list[float]:
    """P(unit score 0, 1, 2) for win/loss card games (no draws: LD and WD never happen):
    P(0) = q - d, P(1) = 1 - 2q, P(2) = q + d, with d chosen so that the normalised
    Elo is ``nelo`` -- solved here from the definition, t = (mu - 1/2) / sd of the
    pair's mean score = nelo / (800 / ln 10) * sqrt(2)."""
    target = nelo / NELO_PER_T * math.sqrt(2)

    def t_of(d: float) -> float:
        p, a = (q - d, 1 - 2 * q, q + d), (0.0, 0.5, 1.0)
        mu = sum(x * y for x, y in zip(p, a, strict=True))
        return (mu - 0.5) / math.sqrt(sum(x * (y - mu) ** 2 for x, y in zip(p, a, strict=True)))

    lo, hi = -q + 1e-12, q - 1e-12
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_of(mid) < target else (lo, mid)
    d = (lo + hi) / 2
    return [q - d, 1 - 2 * q, q + d]


def simulate(spec: SprtSpec, probs: list[float], rng: random.Random, runs: int, cap: int = 5000) -> float:
    """Fraction of SPRTs that accept H1, checking the LLR after every unit as the runner does."""
    # The same table of counts gives the same LLR: computed once (the walks revisit tables).
    table = functools.lru_cache(maxsize=None)(lambda c0, c1, c2: llr(spec, {0.0: c0, 1.0: c1, 2.0: c2}, 2))
    h1 = 0
    for _ in range(runs):
        counts = [0, 0, 0]
        for _ in range(cap):
            counts[rng.choices((0, 1, 2), probs)[0]] += 1
            decision = spec.decision(table(*counts))
            if decision is not None:
                h1 += decision == "H1"
                break
    return h1 / runs


# elo1 = 100 normalised Elo keeps the simulated SPRTs short (about 35 units each), so
# 2,000 of each kind run in well under a minute; alpha = beta = 0.05.
SPEC = SprtSpec(0, 100)


@pytest.mark.slow
def test_equal_bots_accept_h1_at_most_alpha_plus_two_percent():
    assert unit_probabilities(0) == pytest.approx([0.2, 0.6, 0.2])
    rate = simulate(SPEC, unit_probabilities(0), random.Random(11), 2000)
    assert rate <= SPEC.alpha + 0.02


def test_a_true_difference_of_elo1_accepts_h1_at_least_one_minus_beta_minus_two_percent():
    rate = simulate(SPEC, unit_probabilities(SPEC.elo1), random.Random(12), 2000)
    assert rate >= 1 - SPEC.beta - 0.02


# ---------------------------------------------------------------------------
# The run loop: stop once decided, record what was in flight, resume.


def sprt_tournament(out, names=("bot9", "bot1"), max_games=400, spec=SPEC):
    from .helpers import SECRET
    from .test_runner import tournament

    run = SprtRun.for_entrants(spec, list(names), 2, max_games=max_games)
    return tournament(out, names=names, games_per_pairing=run.units_cap, secret=SECRET), run


async def test_an_sprt_run_stops_when_decided_and_a_resume_plays_nothing(tmp_path):
    import json

    from tournaments.runner import run_tournament

    from .helpers import FakePlay

    t, sprt = sprt_tournament(tmp_path / "out")
    assert t.total_games() == 400
    run = await run_tournament(t, play=FakePlay(), sprt=sprt)
    state = sprt.status(run.results.values())
    assert state.decision == "H1"  # bot9 outscores bot1 on every deal
    assert run.played < 100  # far fewer than the 400 scheduled
    # the decision is on complete units; games started before it was reached are recorded too
    assert state.units * 2 <= run.played <= state.units * 2 + t.jobs
    assert sorted(run.results) == list(range(run.played))  # started in order, none skipped
    data = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert data["sprt"]["decision"] == "H1" and data["sprt"]["games"] == run.played
    assert data["sprt"]["llr"] >= data["sprt"]["upper"] and data["sprt"]["history"][-1][1] == data["sprt"]["llr"]
    again_play = FakePlay()
    again = await run_tournament(t, play=again_play, sprt=sprt)
    assert again.played == 0 and again_play.calls == [] and again.resumed == run.played


async def test_an_interrupted_sprt_run_resumes_and_decides_on_the_same_games(tmp_path):
    from tournaments.runner import TournamentError, run_tournament

    from .helpers import FakePlay

    t, sprt = sprt_tournament(tmp_path / "out")
    with pytest.raises(TournamentError):
        await run_tournament(t, play=FakePlay(fail_on=7), sprt=sprt)
    resumed = await run_tournament(t, play=FakePlay(), sprt=sprt)
    assert resumed.resumed >= 5 and sprt.status(resumed.results.values()).decision == "H1"
    t2, _ = sprt_tournament(tmp_path / "straight")
    straight = await run_tournament(t2, play=FakePlay(), sprt=sprt)
    assert sprt.unit_scores(resumed.results.values())[:10] == sprt.unit_scores(straight.results.values())[:10]
    assert sprt.status(resumed.results.values()).units >= sprt.status(straight.results.values()).units - 1


async def test_equal_bots_reach_the_cap_inconclusive(tmp_path):
    import json

    from tournaments.runner import run_tournament

    from .helpers import FakePlay

    t, sprt = sprt_tournament(tmp_path / "out", names=("bot1", "bot1x"), max_games=20, spec=SprtSpec(0, 5))
    run = await run_tournament(t, play=FakePlay(), sprt=sprt)
    assert run.played == 20
    data = json.loads((tmp_path / "out" / "standings.json").read_text())
    assert data["sprt"]["decision"] is None and data["sprt"]["verdict"].startswith("inconclusive")


def test_sprt_needs_the_right_entrants():
    spec = SprtSpec(0, 5)
    with pytest.raises(SprtError, match="exactly two"):
        SprtRun.for_entrants(spec, ["a", "b", "c"], 2)
    with pytest.raises(SprtError, match="name the entrant"):
        SprtRun.for_entrants(spec, ["a", "b", "c"], 3)
    run = SprtRun.for_entrants(spec, ["new", "ref", "old"], 3, reference="ref", max_games=60)
    assert (run.a, run.b, run.games_per_unit, run.units_cap) == ("new", "old", 6, 10)


# ---------------------------------------------------------------------------
# Settings: flags and the [sprt] table; bad ones are one line and exit 2.


def test_sprt_settings_from_flags_and_file(tmp_path):
    from referee_cli.errors import UserError
    from referee_cli.run import build_run

    bot = "python3 bot.py"
    (tmp_path / "bot.py").write_text("")
    flags = {"game": "back-alley", "entrants": [f"new={bot}", f"old={bot}"], "output": tmp_path / "o",
             "cwd": tmp_path}
    t, run = build_run(None, sprt="elo0=0,elo1=5", max_games=101, **flags)
    assert run is not None and (run.a, run.b, run.max_games) == ("new", "old", 101)
    assert t.games_per_pairing == 51 and t.total_games() == 102
    toml = tmp_path / "t.toml"
    toml.write_text('game = "back-alley"\n[sprt]\nelo0 = -1\nelo1 = 3\nbeta = 0.1\nmax_games = 40\n'
                    '[[entrants]]\nname = "a"\ncommand = "python3 bot.py"\n'
                    '[[entrants]]\nname = "b"\ncommand = "python3 bot.py"\n')
    t, run = build_run(toml)
    assert run is not None and run.spec == SprtSpec(-1, 3, 0.05, 0.1) and t.games_per_pairing == 20
    _, none = build_run(None, **flags)
    assert none is None
    for kwargs, words in [({"sprt": "elo0=0,elo1=5", "games_per_pairing": 3}, "not games_per_pairing"),
                          ({"max_games": 10}, "need an SPRT"),
                          ({"sprt": "elo0=0"}, "both elo0 and elo1")]:
        with pytest.raises(UserError, match=words):
            build_run(None, **kwargs, **flags)
    toml.write_text(toml.read_text().replace("beta = 0.1", "gamma = 1"))
    with pytest.raises(UserError, match="unknown setting 'gamma'"):
        build_run(toml)


def test_a_bad_sprt_flag_is_one_line_and_exit_2(tmp_path):
    import subprocess
    import sys

    bot = f"{sys.executable} -c pass"
    done = subprocess.run([sys.executable, "-m", "referee", "run", "--game", "back-alley", "-e", f"a={bot}",
                           "-e", f"b={bot}", "-e", f"c={bot}", "--sprt", "elo0=0,elo1=5", "--dry-run",
                           "--output", str(tmp_path / "o")], capture_output=True, text=True)
    assert done.returncode == 2 and "exactly two entrants" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    ok = subprocess.run([sys.executable, "-m", "referee", "run", "--game", "back-alley", "-e", f"a={bot}",
                         "-e", f"b={bot}", "--sprt", "elo0=0,elo1=5", "--max-games", "30", "--dry-run",
                         "--output", str(tmp_path / "o")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "15 deals" in ok.stderr and "LLR bounds [-2.94, 2.94]; at most 30 games" in ok.stderr


def test_live_lines_fit_80_columns_without_cutting_names():
    from tournaments.report import live_lines
    from tournaments.standings import compute_standings

    from .helpers import result

    names = ("heuristic-version-two", "heuristic")
    games = [result(i, names if i % 2 == 0 else names[::-1], (30, 20) if i % 2 == 0 else (20, 30),
                    deal=i // 2, arrangement=i % 2, pairing=names) for i in range(40)]
    data = compute_standings(list(names), 2, games).to_json()
    run = SprtRun.for_entrants(SprtSpec(0, 5), list(names), 2)
    data["sprt"] = run.status(games).to_json()
    lines = live_lines(data)
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].startswith("SPRT LLR ") and "[-2.94, 2.94] 20 units: running" in lines[0]
    # won every unit: no finite Elo, a finite lower bound; one notation for infinity
    assert "heuristic-version-two" in lines[1] and "Elo +∞ ≥+" in lines[1] and "20 units" in lines[1]
    assert lines[1].lstrip().startswith("1 ") and lines[2].lstrip().startswith("2 heuristic ")
    assert "Elo -∞ ≤-" in lines[2] and "inf" not in "".join(lines)
