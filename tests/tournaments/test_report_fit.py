"""The standings' tables fit the screen: rendered at 80 and 100 columns with many entrants
with long names, nothing is cut with "…", no line is wider than the screen, no column is
squeezed to nothing, every entrant's name is shown whole (wrapped, not cut) in every
part of a split table, and every column and figure is somewhere; --wide shows each table
whole; --columns picks the main table's columns. Also referee.tables' Grid on its own."""

from __future__ import annotations

import io
import itertools

import pytest
from rich.cells import cell_len
from rich.console import Console

from referee.tables import Col, Grid, table_width
from tournaments.report import STANDINGS_COLUMNS, print_decision_times, print_standings, summary_line
from tournaments.results import GameFault
from tournaments.standings import compute_standings

from ..terminal import table_problems
from .helpers import result, skill

LONG = [f"heuristic-back-alley-bot-version-{i}-with-a-long-name" for i in range(1, 7)] + ["b8", "x9 with spaces"]


def standings(names=LONG, deals=2):
    results, gid = [], 0
    for a, b in itertools.combinations(names, 2):
        for deal in range(deals):
            for arrangement, teams in enumerate(((a, b), (b, a))):
                fault = None
                if "version-3" in teams[0] and deal == 0:
                    fault = GameFault(team=0, seat=0, entrant=teams[0], reason="timeout", message="no reply")
                scores = (10 * skill(teams[0]) + deal * 7 % 5, 10 * skill(teams[1]) + arrangement * 3)
                results.append(result(gid, teams, scores, deal=deal, arrangement=arrangement, pairing=(a, b),
                                      fault=fault, winners=(1,) if fault else None))
                gid += 1
    s = compute_standings(list(names), 2, results, games_total=gid)
    return s.to_json(), s


def render(data, width, **kwargs) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=width, highlight=False, soft_wrap=True)
    print_standings(data, console, **kwargs)
    return out.getvalue().splitlines()


def tables_of(lines):
    """Each table (by its title line) as its header and its rows, a row's wrapped lines
    joined (cells split over lines are put back together)."""
    tables, current = [], None
    for i, line in enumerate(lines):
        if line.startswith("┏"):
            current = {"title": lines[i - 1].strip(), "header": [], "rows": []}
            tables.append(current)
        elif current is None or not line.startswith(("┃", "│")):
            continue
        elif line.startswith("┃"):
            cells = [c.strip() for c in line.strip("┃").split("┃")]
            current["header"] = [" ".join(x for x in (h, c) if x) for h, c in
                                 itertools.zip_longest(current["header"], cells, fillvalue="")]
        else:
            cells = [c.strip() for c in line.strip("│").split("│")]
            if not current["rows"] or cells[-1]:
                current["rows"].append(cells)
            else:  # the continuation of the row above: wrapped names (the last cell is empty)
                current["rows"][-1] = [a + b for a, b in zip(current["rows"][-1], cells, strict=True)]
    return tables


@pytest.fixture(autouse=True)
def _no_columns_env(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.mark.parametrize("width", [80, 100])
def test_standings_fit_the_width_and_show_every_name_whole_and_every_figure(width):
    data, _ = standings()
    lines = render(data, width)
    text = "\n".join(lines)
    assert "…" not in text
    assert max(cell_len(line) for line in lines) <= width, [line for line in lines if cell_len(line) > width]
    assert not table_problems(lines)
    tables = tables_of(lines)
    main = [t for t in tables if t["title"].startswith(("Standings (", "Standings (continued)"))]
    assert len(main) >= 2 and "(tables split to fit" in text
    headers = " ".join(" ".join(t["header"]) for t in main)
    for h in ("#", "entrant", "games", "W-D-L", "Elo ±95%", "LOS", "win rate [95% Wilson]",
              "score diff/deal [95% CI]", "rating μ±σ", "forfeits"):
        assert h in headers, (h, headers)
    for part in main:  # every part names every entrant, whole, in the standings' order
        assert [row[1].replace(" ", "") for row in part["rows"]] == [e["name"].replace(" ", "")
                                                                       for e in data["entrants"]]
    rows = {}
    for part in main:
        for row in part["rows"]:
            rows.setdefault(row[1].replace(" ", ""), []).extend(row[2:])
    for e in data["entrants"]:
        cells = rows[e["name"].replace(" ", "")]
        assert f"{e['wins']}-{e['draws']}-{e['losses']}" in cells and str(e["games"]) in cells
    assert any("timeout" in c for c in rows[LONG[2].replace(" ", "")])
    # The most-used columns come first: Elo and W-D-L are in the first part.
    assert "Elo ±95%" in " ".join(main[0]["header"]) and "W-D-L" in " ".join(main[0]["header"])
    # Head to head: eight long names do not fit as headers: numbered columns, every one somewhere.
    h2h = [t for t in tables if t["title"].startswith("Head to head")]
    assert h2h
    shown = " ".join(" ".join(t["header"]) for t in h2h)
    assert all(f"vs {i}" in shown for i in range(1, len(LONG) + 1)), shown
    assert all(len(t["rows"]) == len(LONG) for t in h2h)
    duplicate = [t for t in tables if t["title"].startswith("Duplicate deals")]
    assert sum(len(t["rows"]) for t in duplicate[:1]) == len(data["paired"])


def test_wide_prints_each_table_whole():
    data, _ = standings()
    lines = render(data, 80, wide=True)
    tables = tables_of(lines)
    main = [t for t in tables if t["title"].startswith("Standings")]
    assert len(main) == 1 and "continued" not in "\n".join(lines) and "split to fit" not in "\n".join(lines)
    assert len(main[0]["header"]) == 11
    assert max(cell_len(line) for line in lines) > 80  # as wide as they need
    assert "…" not in "\n".join(lines) and not table_problems(lines)


def test_columns_pick_the_main_tables_columns_in_their_order():
    data, _ = standings(["a1", "b2", "c3"])
    lines = render(data, 100, columns=["win", "elo"])
    main = next(t for t in tables_of(lines) if t["title"].startswith("Standings"))
    assert main["header"] == ["#", "entrant", "win rate [95% Wilson]", "Elo ±95%"]
    assert len(STANDINGS_COLUMNS) == 9


def test_the_run_commands_column_names_are_the_reports():
    from referee_cli import run

    assert run.STANDINGS_COLUMNS == STANDINGS_COLUMNS


def test_short_names_fit_whole_at_100_columns_in_fewer_parts():
    data, _ = standings(["random-a", "random-b", "random-c"])
    lines80, lines100 = render(data, 80), render(data, 100)
    parts = [sum(1 for t in tables_of(x) if t["title"].startswith("Standings")) for x in (lines80, lines100)]
    assert parts[1] <= parts[0]
    h2h = next(t for t in tables_of(lines100) if t["title"].startswith("Head to head"))
    assert h2h["header"] == ["", *(e["name"] for e in data["entrants"])]  # names as headers when they fit


@pytest.mark.parametrize("width", [80, 100])
def test_decision_times_fit_with_long_names(width):
    data, _ = standings()
    out = io.StringIO()
    console = Console(file=out, width=width, highlight=False)
    times = {e["name"]: (1000 + i, 0.5 * i, 12.25) for i, e in enumerate(data["entrants"])}
    print_decision_times(times, data, console)
    lines = out.getvalue().splitlines()
    assert max(cell_len(line) for line in lines) <= width and "…" not in out.getvalue()
    rows = tables_of(lines)[0]["rows"]
    assert [r[0].replace(" ", "") for r in rows] == [e["name"].replace(" ", "") for e in data["entrants"]]


def test_summary_line_names_the_leader_or_those_tied_first():
    data, _ = standings(["a1", "b2", "c3"], deals=3)
    line = summary_line(data, "back-alley")
    leader = data["entrants"][0]
    if data["entrants"][1]["rank"] == leader["rank"]:
        assert "tied first: " in line
    else:
        assert f"leader {leader['name']} {leader['wins']}-{leader['draws']}-{leader['losses']}, Elo " in line
    assert line.startswith(f"back-alley: {data['games_played']} games; ") and line.endswith("0 forfeits")
    data, _ = standings(["a1", "a2"], deals=1)
    data["entrants"][1]["rank"] = data["entrants"][0]["rank"]
    assert "tied first: a1, a2" in summary_line(data, "schmier") or "tied first: a2, a1" in summary_line(
        data, "schmier")


# -- Grid on its own ---------------------------------------------------------------------

def grid(n_cols=12, width_each=6, groups=None, long_key=False):
    cols = [Col("key", key=True, fold=True),
            *(Col(f"c{i}", rank=n_cols - i, group=(groups or {}).get(i)) for i in range(n_cols))]
    g = Grid("T (x)", cols)
    for r in range(3):
        g.add_row(("k" * 40 if long_key else f"k{r}"), *(str(r).rjust(width_each, "9") for _ in range(n_cols)))
    return g


def test_a_grid_that_fits_is_one_table():
    g = grid(n_cols=3)
    assert len(g.parts(80)) == 1 and len(g.fit(None)) == 1


def test_parts_keep_the_keys_take_the_most_used_first_and_keep_groups_together():
    g = grid(n_cols=12, groups={0: "g", 1: "g", 2: "g"})
    parts = g.parts(60)
    assert len(parts) > 1
    for cols, _ in parts:
        assert cols[0] == 0  # the key in every part
        widths = [g.natural_widths()[i] for i in cols]
        assert table_width(widths) <= 60
    firsts = parts[0][0]
    assert 12 in firsts  # c11 has rank 1: the most used
    where = {i: n for n, (cols, _) in enumerate(parts) for i in cols if i}
    assert where[1] == where[2] == where[3]  # the group c0..c2 in one part
    assert sorted(where) == list(range(1, 13))  # every column somewhere, once


def test_a_long_name_key_wraps_and_a_too_wide_value_folds_rather_than_being_cut():
    g = grid(n_cols=4, long_key=True)
    parts = g.parts(60)
    assert all(caps.get(0) is not None and caps[0] < 40 for _, caps in parts)
    out = io.StringIO()
    console = Console(file=out, width=60)
    for table in g.fit(60):
        console.print(table)
    text = out.getvalue()
    assert "…" not in text and "k" * 40 not in text
    assert text.count("k") >= 3 * 40  # every k of every name is there, over several lines
    wide = Grid(None, [Col("k", key=True), Col("v")])
    wide.add_row("a", "x" * 150)
    out = io.StringIO()
    console = Console(file=out, width=80)
    for table in wide.fit(80):
        console.print(table)
    assert out.getvalue().count("x") == 150 and max(cell_len(x) for x in out.getvalue().splitlines()) <= 80


@pytest.mark.parametrize("width", [50, 80, 100])
def test_the_live_leader_lines_wrap_a_long_name_whole_and_cut_nothing(width):
    from tournaments.report import live_lines

    long_name = "a-very-long-entrant-name-" * 3 + "v2"
    data, _ = standings([long_name, "b2", "c3", "d4", "e5"])
    lines = live_lines(data, width)
    assert all(len(line) <= width for line in lines), lines
    assert "…" not in "\n".join(lines)
    assert long_name in "".join(line.strip() for line in lines)  # whole, if over several lines
    assert lines[-1].strip() == "and 1 more"


@pytest.mark.parametrize("width", [80, 100])
def test_the_sprt_box_wraps_inside_the_width(width):
    data, _ = standings(["v2", "v1"])
    data["sprt"] = {"a": "v2", "b": "v1", "elo0": 0.0, "elo1": 50.0, "alpha": 0.05, "beta": 0.05, "llr": 3.09,
                    "lower": -2.94, "upper": 2.94, "decision": "H1", "units": 17, "games": 35,
                    "games_per_unit": 2, "max_games": 400, "distribution": [1, 2, 3, 4, 7], "history": [],
                    "verdict": "H1 accepted: v2 is better than v1 (elo 50 favoured over 0)"}
    lines = render(data, width)
    box = lines[next(i for i, line in enumerate(lines) if line.strip() == "SPRT"):]
    assert max(cell_len(line) for line in lines) <= width, "\n".join(lines)
    text = " ".join(line.strip("│ ") for line in box)
    assert "H1 accepted: v2 is better than v1" in " ".join(text.split()), text
