"""Honest figures (#27): every printed interval lies inside its range and has width, one
notation for infinity, in the terminal tables and in report.html, on extreme and tiny
samples (0 of n, n of n, one unit, no units)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from tournaments.elo import estimate
from tournaments.figures import elo_interval_text, elo_text, interval, los_text, number, share
from tournaments.html_report import render
from tournaments.report import standings_tables
from tournaments.standings import compute_standings
from tournaments.stats import mean_ci, wilson

from .helpers import result

PCT_INTERVAL = re.compile(r"(-?\d+(?:\.\d+)?)% \[(-?\d+(?:\.\d+)?)%, (-?\d+(?:\.\d+)?)%\]")


def pct_intervals(text: str) -> list[tuple[float, float, float]]:
    return [(float(v), float(lo), float(hi)) for v, lo, hi in PCT_INTERVAL.findall(text)]


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 12), (12, 12), (1, 12), (0, 1000), (1000, 1000),
                                      (999, 1000), (1, 1000)])
def test_a_share_prints_inside_0_100_and_with_width(k, n):
    text = share(wilson(k, n).to_json())
    [(v, lo, hi)] = pct_intervals(text)
    assert 0 <= lo <= v <= hi <= 100 and lo < hi, text


def test_a_share_near_the_edge_gets_the_decimals_that_show_its_width():
    assert share(wilson(1000, 1000).to_json()) == "100.0% [99.6%, 100.0%]"
    assert share(wilson(0, 1000).to_json()) == "0.0% [0.0%, 0.4%]"
    assert share(wilson(6, 12).to_json()) == "50% [25%, 75%]"


def test_no_figure_and_no_interval_are_said_so():
    assert share(wilson(0, 0).to_json()) == "–"
    assert interval(mean_ci([]).to_json()) == "–"
    assert interval(mean_ci([12.0]).to_json()) == "+12.0 [–]"  # one unit: no interval
    assert interval(mean_ci([3.0, 3.0, 3.0]).to_json()) == "+3.0 [–]"  # no spread: not [+3.0, +3.0]
    assert interval(mean_ci([1.0, 2.0, 3.0]).to_json()) == "+2.0 [-0.5, +4.5]"


def test_infinity_is_written_one_way():
    assert number(float("inf")) == "+∞" and number(float("-inf")) == "-∞" and number(None) == "–"


@pytest.mark.parametrize(("scores", "text", "bounds"), [
    ([], "–", "–"),
    ([2.0], "+∞", "[-∞, +∞]"),  # one unit won outright: no finite estimate, no interval
    ([0.0], "-∞", "[-∞, +∞]"),
    ([1.0], "+0 ±∞", "[-∞, +∞]"),
    ([2.0] * 12, "+∞ ≥+", "[+"),  # n of n: a lower bound, open above
    ([0.0] * 12, "-∞ ≤-", "[-∞, -"),  # 0 of n: an upper bound, open below
    ([1.0, 1.5] * 20, "+", "[+"),
])
def test_elo_at_the_extremes(scores, text, bounds):
    e = estimate(scores, 2).to_json()
    assert elo_text(e, warn=False).startswith(text)
    assert elo_interval_text(e).startswith(bounds)
    shown = elo_text(e) + elo_interval_text(e)
    assert "inf" not in shown and "–∞" not in shown
    if e["lo"] is not None and e["hi"] is not None:
        assert "±" in elo_text(e) and e["lo"] < e["hi"]


def test_elo_of_a_pairing_won_in_every_unit_reads_as_its_lower_bound():
    e = estimate([2.0] * 12, 2).to_json()
    assert los_text(e) == ">99.9%" and los_text(estimate([0.0] * 12, 2).to_json()) == "<0.1%"
    assert los_text(estimate([1.0, 1.0], 2).to_json()) == "50.0%"
    assert e["elo"] is None and e["hi"] is None and e["lo"] > 0
    assert elo_text(e) == f"+∞ ≥{e['lo']:+.0f} (!)"
    assert elo_interval_text(e) == f"[{e['lo']:+.0f}, +∞]"


def two_team_games(n_deals: int, team0_always_wins: bool) -> list:
    """a against b on ``n_deals`` duplicate deals; team 0 wins every game (a pure seat effect)
    or a wins every game (a pure skill gap)."""
    games = []
    for deal in range(n_deals):
        for arrangement, teams in enumerate((("a", "b"), ("b", "a"))):
            winner = 0 if team0_always_wins else teams.index("a")
            scores = (30, 10) if winner == 0 else (10, 30)
            games.append(result(len(games), teams, scores, deal=deal, arrangement=arrangement, pairing=("a", "b")))
    return games


def schmier_games(n_deals: int) -> list:
    """Schmier, one triple on ``n_deals`` deals in all six seatings; team 0 always wins,
    team 1 is always second: seat effects of 100 %, 0 % and 0 % win share."""
    import itertools

    names = ("a", "b", "c")
    games = []
    for deal in range(n_deals):
        for arrangement, teams in enumerate(itertools.permutations(names)):
            games.append(result(len(games), teams, (60, 40, 20), deal=deal, arrangement=arrangement,
                                pairing=names))
    return games


def rendered(data) -> tuple[str, str]:
    buf = io.StringIO()
    console = Console(file=buf, width=250, color_system=None)
    for table in standings_tables(data):
        console.print(table)
    return buf.getvalue(), render(data, [], __import__("pathlib").Path("."))


@pytest.mark.parametrize("case", ["seat-1-unit", "seat-12-units", "skill-1-unit", "skill-12-units",
                                  "schmier-1-unit", "schmier-2-units", "no-games"])
def test_every_printed_share_interval_is_inside_its_range_and_has_width(case):
    if case == "no-games":
        data = compute_standings(["a", "b"], 2, []).to_json()
    elif case.startswith("schmier"):
        data = compute_standings(["a", "b", "c"], 3, schmier_games(int(case.split("-")[1]))).to_json()
    else:
        n = int(case.split("-")[1])
        data = compute_standings(["a", "b"], 2, two_team_games(n, case.startswith("seat"))).to_json()
    for text in rendered(data):
        assert "inf" not in text and "–∞" not in text and "nan" not in text
        for v, lo, hi in pct_intervals(text):
            assert 0 <= lo <= v <= hi <= 100 and lo < hi, (case, v, lo, hi)
        for lo, hi in re.findall(r"\[([+-]\d+\.\d), ([+-]\d+\.\d)\]", text):
            assert float(lo) < float(hi), (case, lo, hi)  # score differences: no zero-width interval
    if case != "no-games":
        assert data["positions"], case
        for p in data["positions"]:
            ws = p["win_share"]
            assert 0.0 <= ws["lo"] <= ws["value"] <= ws["hi"] <= 1.0 and ws["lo"] < ws["hi"]


def test_a_seat_that_always_wins_prints_a_share_of_100_with_a_lower_bound_below():
    data = compute_standings(["a", "b", "c"], 3, schmier_games(6)).to_json()
    team0, team1 = data["positions"][0], data["positions"][1]
    # 6 units, team 0 wins each game: 100 % [61 %, 100 %] (Wilson), not 100 % [100 %, 100 %]
    assert share(team0["win_share"]) == "100% [61%, 100%]"
    assert share(team1["win_share"]) == "0% [0%, 39%]"
    # every unit alike: no score-difference interval rather than a zero-width one
    assert team0["score_diff"]["lo"] is None and interval(team0["score_diff"]) == "+30.0 [–]"
