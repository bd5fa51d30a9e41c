"""Presentation: progress display and standings tables (the files are written by standings_files.py).

Progress goes to stderr (a live rich bar on a terminal, plain lines
otherwise); the standings table is the command's output and goes to stdout.
"""

from __future__ import annotations

import math
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console, JustifyMethod
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from referee.tables import Col, Grid, fit_grids, fit_width, print_tables, table_width

from .config import describe_overrides
from .figures import (
    FEW_MARK,
    distribution_text,
    elo_interval_text,
    elo_text,
    interval,
    los_text,
    number,
    percent,
    sandbox_notes,
    share,
    sprt_lines,
)
from .results import GameResult, game_fault_line
from .sprt import SprtRun
from .standings import compute_standings

__all__ = ["STANDINGS_COLUMNS", "LiveSummary", "PlainProgress", "QuietProgress", "RichProgress",
           "print_decision_times", "print_standings", "standings_grids", "standings_tables", "summary_line"]

# ---------------------------------------------------------------------------
# Tables


def _num(x: float | None, fmt: str = "{:+.1f}") -> str:
    return number(x, _spec(fmt))


def _spec(fmt: str) -> str:
    """``{:+.1f}`` -> ``+.1f``."""
    return fmt.removeprefix("{:").removesuffix("}")


def _ci(iv: dict[str, float | None], fmt: str) -> str:
    return interval(iv, _spec(fmt))


def _pct(iv: dict[str, float | None]) -> str:
    return share(iv)


#: The main standings table's columns that ``--columns`` can pick, by name, in the order
#: they are kept when the screen is narrow (the most-used first); ``#`` and ``entrant``
#: are always shown.
STANDINGS_COLUMNS = ("score", "elo", "wdl", "win", "los", "rating", "diff", "games", "forfeits")


def _main_grid(data: dict[str, Any], title: str, caption: str | None,
               columns: Sequence[str] | None) -> Grid:
    rank = {name: i for i, name in enumerate(columns or STANDINGS_COLUMNS)}
    header: dict[str, tuple[str, JustifyMethod]] = {
        "games": ("games", "right"), "wdl": ("W-D-L", "right"), "score": ("score", "right"),
        "elo": ("Elo\n±95%", "right"),
        "los": ("LOS", "right"), "win": ("win rate\n[95% Wilson]", "right"),
        "diff": ("score diff/deal\n[95% CI]", "right"), "rating": ("rating\nμ±σ", "right"),
        "forfeits": ("forfeits", "left")}
    # Display order: as before; with --columns, the order given.
    shown: list[str] = list(columns) if columns is not None else [
        "games", "wdl", "score", "elo", "los", "win", "diff", "rating", "forfeits"]
    grid = Grid(f"{title} ({data['games_played']} games)",
                [Col("#", key=True), Col("entrant", "left", key=True, fold=True),
                 *(Col(header[n][0], header[n][1], rank=rank[n]) for n in shown)], caption=caption)
    for e in data["entrants"]:
        rt = e["rating"]
        cells = {
            "games": str(e["games"]), "wdl": f"{e['wins']}-{e['draws']}-{e['losses']}",
            "score": percent(e.get("score")), "elo": elo_text(e["elo"]), "los": los_text(e["elo"]),
            "win": _pct(e["win_rate"]),
            "diff": _ci(e["score_diff"], "{:+.1f}"), "rating": f"{rt['mu']:.1f}±{rt['sigma']:.1f}",
            "forfeits": ", ".join(f"{k} {v}" for k, v in e["forfeits_by_reason"].items()) or "–"}
        grid.add_row(e.get("rank_label", str(e["rank"])), e["name"], *(cells[n] for n in shown))
    return grid


def _head_to_head_grid(data: dict[str, Any], width: int | None) -> Grid | None:
    """Each entrant's W-D-L against each other, in the standings' order: named columns when
    they fit, else numbered ones ("vs 2": against the entrant numbered 2 in the first column)."""
    names = [e["name"] for e in data["entrants"]]
    if len(names) < 2:
        return None
    h2h = data["head_to_head"]

    def cells(a: str) -> list[str]:
        out = []
        for b in names:
            r = h2h[a].get(b) if a != b else None
            out.append("·" if r is None or not r["games"] else f"{r['wins']}-{r['draws']}-{r['losses']}")
        return out

    title = "Head to head (row's W-D-L against column)"
    named = Grid(title, [Col("", "left", key=True, fold=True), *(Col(n) for n in names)])
    for a in names:
        named.add_row(a, *cells(a))
    if width is None or table_width(named.natural_widths()) <= width:
        return named
    numbered = Grid(title, [Col("", key=True), Col("entrant", "left", key=True, fold=True),
                            *(Col(f"vs {i}", rank=i) for i in range(1, len(names) + 1))])
    for i, a in enumerate(names, 1):
        numbered.add_row(str(i), a, *cells(a))
    return numbered


def _paired_grid(data: dict[str, Any]) -> Grid | None:
    if not data["paired"]:
        return None
    two = all(p.get("pentanomial") is not None for p in data["paired"])
    grid = Grid("Duplicate deals (A against B; a unit is one deal in every seating)", [
        Col("A", "left", key=True, fold=True), Col("B", "left", key=True, fold=True), Col("units", rank=1),
        Col("pentanomial\nLL-LD-D-WD-WW" if two else "A's unit\nscore: count", rank=4),
        Col("Elo\n±95%", rank=0), Col("Elo\n[95% interval]", rank=5), Col("LOS", rank=2),
        Col("mean diff\n[95% CI]", rank=3), Col("left out\n(forfeit)", rank=6)])
    for p in data["paired"]:
        grid.add_row(p["a"], p["b"], str(p["units"]), distribution_text(p), elo_text(p["elo"]),
                     elo_interval_text(p["elo"]), los_text(p["elo"]), _ci(p["mean_diff"], "{:+.1f}"),
                     str(p["excluded_deals"]))
    return grid


def _positions_grid(data: dict[str, Any]) -> Grid | None:
    if not data.get("positions"):
        return None
    grid = Grid("Seat and position effects (over duplicate units: skill cancels)", [
        Col("place", "left", key=True, fold=True), Col("units", rank=2), Col("win share\n[95% CI]", rank=0),
        Col("fair", rank=1), Col("score diff\n[95% CI]", rank=3)])
    for e in data["positions"]:
        grid.add_row(e["place"], str(e["units"]), _pct(e["win_share"]), f"{e['fair_share']:.0%}",
                     _ci(e["score_diff"], "{:+.1f}"))
    return grid


def _endings_grid(data: dict[str, Any]) -> Grid | None:
    if not data.get("endings"):
        return None
    grid = Grid("How games ended", [Col("ending", "left", key=True, fold=True), Col("games")])
    for k, v in data["endings"].items():
        grid.add_row(k, str(v))
    return grid


def standings_grids(data: dict[str, Any], title: str = "Standings", width: int | None = None,
                    columns: Sequence[str] | None = None) -> list[Grid]:
    """The standings' tables as grids, to fit to a width: the entrants, head to head, the
    duplicate deals, seat and position effects, how games ended."""
    played, total = data["games_played"], data["games_total"]
    sprt = data.get("sprt")
    notes = [] if data["complete"] or sprt else [f"incomplete: {played} of {total} games"]
    notes += sandbox_notes(data.get("sandbox"))
    entrants = data["entrants"]
    if any(e["elo"]["few_units"] for e in entrants) or any(p["elo"]["few_units"] for p in data["paired"]):
        notes.append(f"{FEW_MARK} fewer than 30 duplicate units: a rough figure, the interval is wide")
    if any(e.get("tied") for e in entrants):
        notes.append("=N: tied, the results do not tell them apart (docs/tournaments.md: Ranks and ties)")
    grids = [_main_grid(data, title, "; ".join(notes) or None, columns),
             _head_to_head_grid(data, width), _paired_grid(data), _positions_grid(data), _endings_grid(data)]
    return [g for g in grids if g is not None]


def standings_tables(data: dict[str, Any], title: str = "Standings", width: int | None = None,
                     columns: Sequence[str] | None = None) -> list[Table]:
    """The standings as rich tables within ``width`` columns (None: each table whole)."""
    return _fitted(data, title, width, columns)[0]


def _fitted(data: dict[str, Any], title: str, width: int | None,
            columns: Sequence[str] | None) -> tuple[list[Table], bool]:
    tables, split = fit_grids(standings_grids(data, title, width, columns), width)
    if sprt := data.get("sprt"):
        # fitted like the others: its lines wrap between words inside the width
        box = Table(title="SPRT", show_header=False, width=width)
        box.add_column("", no_wrap=False, overflow="fold")
        for line in sprt_lines(sprt):
            box.add_row(line)
        tables.append(box)
    return tables, split


def print_standings(data: dict[str, Any], console: Console, *, wide: bool = False,
                    columns: Sequence[str] | None = None) -> None:
    """The standings, fitted to the console's width (``wide``: each table whole); a table
    too wide is split into parts that keep its names, and a line says so."""
    width = None if wide else fit_width(console)
    tables, split = _fitted(data, "Standings", width, columns)
    print_tables(console, tables)
    for line in describe_overrides(data.get("overrides", {})):
        console.print(f"own limits: {line}", markup=False, highlight=False)
    if split:
        console.print(f"(tables split to fit {width} columns: --wide shows each whole; "
                      "standings.json and standings.csv hold every figure)", markup=False, highlight=False,
                      soft_wrap=False)  # wrapped between words, not by the terminal


def summary_line(data: dict[str, Any], game: str) -> str:
    """``referee run --quiet``'s one line: the game, the games played, the leader (or the
    entrants tied first) with W-D-L and Elo, the SPRT's verdict, the forfeits."""
    played, total = data["games_played"], data["games_total"]
    entrants = data["entrants"]
    games = f"{played} games" if data["complete"] or data.get("sprt") else f"{played} of {total} games"
    parts = [f"{game}: {games}"]
    if entrants:
        first = [e for e in entrants if e["rank"] == entrants[0]["rank"]]
        if len(first) == 1:
            e = first[0]
            parts.append(f"leader {e['name']} {e['wins']}-{e['draws']}-{e['losses']}, Elo {elo_text(e['elo'])}")
        else:
            parts.append(f"tied first: {', '.join(e['name'] for e in first)}")
    if sprt := data.get("sprt"):
        parts.append(f"SPRT {sprt['verdict']}")
    forfeits = sum(e["forfeits"] for e in entrants)
    parts.append(f"{forfeits} forfeit{'' if forfeits == 1 else 's'}")
    return "; ".join(parts)


def print_decision_times(times: Mapping[str, tuple[int, float, float]], data: dict[str, Any],
                         console: Console, *, wide: bool = False) -> None:
    """Each entrant's replies, mean and longest decision time (``standings.decision_times``),
    in the standings' order: a measurement, so not part of ``standings.json``."""
    if not times:
        return
    grid = Grid("Decision time (ms per reply)", [Col("entrant", "left", key=True, fold=True),
                                                 Col("decisions"), Col("mean"), Col("max")])
    for e in data["entrants"]:
        if (t := times.get(e["name"])) is not None:
            grid.add_row(e["name"], str(t[0]), f"{t[1]:.1f}", f"{t[2]:.1f}")
    print_tables(console, grid.fit(None if wide else fit_width(console)))


def live_lines(data: dict[str, Any], width: int = 80, top: int = 4) -> list[str]:
    """A few lines for under the progress bar: the leaders in the standings' order, each
    with its rank, its score (points per game, what the order is by) and Elo; and the SPRT.
    Nothing is cut: a line wider than ``width`` wraps, and a name too long for its column
    gets lines of its own above its figures."""
    lines = []
    if sprt := data.get("sprt"):
        verdict = sprt["decision"] and f"{sprt['decision']} accepted" or "running"
        lines += textwrap.wrap(f"SPRT LLR {sprt['llr']:+.2f} [{sprt['lower']:.2f}, {sprt['upper']:.2f}] "
                               f"{sprt['units']} units: {verdict}", width, subsequent_indent="  ")
    entrants = data["entrants"]
    name_w = max(4, min(max((len(e["name"]) for e in entrants[:top]), default=4), width - 44))
    for e in entrants[:top]:
        rank = f"{e.get('rank_label', str(e['rank'])):>3}"
        name = e["name"]
        if len(name) > name_w:  # the whole name first, wrapped; its figures under it
            lines += textwrap.wrap(name, width - 4, initial_indent=f"{rank} ", subsequent_indent="    ",
                                   break_on_hyphens=False)
            rank, name = "", ""
        figures = (f"{rank:>3} {name:<{name_w}} {percent(e['score']):>6}  Elo {elo_text(e['elo'])}  "
                   f"{e['elo']['units']} units")
        lines += textwrap.wrap(figures, width, subsequent_indent="    ", drop_whitespace=False) or [""]
    if len(entrants) > top:
        lines.append(f"    and {len(entrants) - top} more")
    return lines


class LiveSummary:
    """Standings of the games so far, for the progress display: recomputed at most every ``every_s``."""

    def __init__(self, t: Any, done: Mapping[int, GameResult], sprt: SprtRun | None = None,
                 every_s: float = 1.0) -> None:
        self.t, self.sprt, self.every_s = t, sprt, every_s
        self.results: dict[int, GameResult] = dict(done)
        self.at = -math.inf
        self.cached: list[str] = []

    def add(self, result: GameResult) -> None:
        self.results[result.game_id] = result

    def lines(self, width: int = 80, force: bool = False) -> list[str]:
        now = time.monotonic()
        if force or now - self.at >= self.every_s:
            self.at = now
            standings = compute_standings(self.t.names, self.t.num_teams, self.results.values(),
                                          games_total=self.t.total_games())
            data = standings.to_json()
            if self.sprt is not None:
                data["sprt"] = self.sprt.status(self.results.values()).to_json()
            self.cached = live_lines(data, width)
        return self.cached


# ---------------------------------------------------------------------------
# Progress


class RateColumn(ProgressColumn):
    """Games per minute over this run so far (games done / time since the start): no
    wild figure from the first one or two games, as a short sliding window gives."""

    def __init__(self, owner: RichProgress) -> None:
        super().__init__()
        self.owner = owner

    def render(self, task: Task) -> Text:
        rate = self.owner.rate()
        return Text("– /min" if rate is None else f"{rate:.1f}/min", style="progress.data.speed")


class EtaColumn(ProgressColumn):
    def __init__(self, owner: RichProgress) -> None:
        super().__init__()
        self.owner = owner

    def render(self, task: Task) -> Text:
        rate = self.owner.rate()
        if rate is None or task.total is None or self.owner.live and self.owner.live.sprt is not None:
            return Text("")
        left = (task.total - task.completed) / (rate / 60)
        return Text(f"ETA {time.strftime('%H:%M:%S', time.gmtime(left))}", style="progress.remaining")


class _SummaryProgress(Progress):
    """A progress bar with the live standings under it."""

    def __init__(self, *columns: Any, summary: Any, **kwargs: Any) -> None:
        # Set before Progress.__init__: it builds its Live display, which renders
        # (get_renderables) at once when the console is a terminal.
        self.summary = summary
        super().__init__(*columns, **kwargs)

    def get_renderables(self) -> Any:
        yield self.make_tasks_table(self.tasks)
        lines = self.summary()
        if lines:
            yield Text("\n".join(lines), no_wrap=True, overflow="ellipsis")


def cluster_line(status: Mapping[str, Any]) -> str:
    """A ``--dask`` run's line in the live display (``DaskExecutor.chunk_status``)."""
    return (f"dask: {status.get('workers', 0)} workers, chunks {status.get('queued', 0)} queued "
            f"{status.get('running', 0)} running {status.get('done', 0)} done, "
            f"{status.get('games_per_s', 0.0):.2f} games/s")


class RichProgress:
    """Live bar on stderr: done/total, rate, ETA, elapsed, faults so far, and the
    leaders (and the SPRT) under it; fits 80 columns."""

    def __init__(self, console: Console | None = None, live: LiveSummary | None = None, *, game: str = "",
                 output: Path = Path()) -> None:
        self.console = console or Console(stderr=True)
        self.live = live
        self.game, self.output = game, output  # for the fault lines (results.game_fault_line)
        # A --dask run's chunk counts (set by the runner): a line above the leaders.
        self.cluster: Callable[[], Mapping[str, Any]] | None = None
        self.progress = _SummaryProgress(
            TextColumn("[bold]games"), BarColumn(bar_width=16), MofNCompleteColumn(), RateColumn(self),
            EtaColumn(self), TimeElapsedColumn(),
            TextColumn("faults {task.fields[faults]}"),
            console=self.console, transient=False,
            summary=lambda: ([cluster_line(self.cluster())] if self.cluster is not None else []) +
            (self.live.lines(min(self.console.width, 80)) if self.live else []),
        )
        self.task: TaskID | None = None  # set by start()
        self.faults = 0
        self.t0 = 0.0
        self.played = 0

    def rate(self) -> float | None:
        elapsed = time.monotonic() - self.t0
        return self.played / elapsed * 60 if self.played and elapsed > 0 else None

    def start(self, *, total: int, done: int, faults: int) -> None:
        self.faults = faults
        self.t0 = time.monotonic()
        self.progress.start()
        # Created with the resumed games already completed: the rate and ETA
        # count this run's games only.
        self.task = self.progress.add_task("games", total=total, completed=done, faults=faults)

    def advance(self, result: GameResult) -> None:
        self.played += 1
        if self.live is not None:
            self.live.add(result)
        if (line := game_fault_line(result, self.game, self.output)) is not None:
            self.faults += 1
            self.progress.console.print(line, markup=False, highlight=False)
        assert self.task is not None, "advance() before start()"
        self.progress.update(self.task, advance=1, faults=self.faults)

    def finish(self) -> None:
        if self.live is not None:
            self.live.lines(force=True)
        self.progress.refresh()
        self.progress.stop()


class QuietProgress:
    """``referee run --quiet``: no progress at all; only a line per faulted game."""

    def __init__(self, stream: TextIO | None = None, *, game: str = "", output: Path = Path()) -> None:
        self.stream = stream or sys.stderr
        self.game, self.output = game, output

    def start(self, *, total: int, done: int, faults: int) -> None:
        pass

    def advance(self, result: GameResult) -> None:
        if (line := game_fault_line(result, self.game, self.output)) is not None:
            print(line, file=self.stream, flush=True)

    def finish(self) -> None:
        pass


class PlainProgress:
    """Plain lines on a stream, at most one every ``interval`` seconds (and
    one per fault, and one at the end), each followed by the leaders' lines."""

    def __init__(self, stream: TextIO | None = None, interval: float = 5.0, live: LiveSummary | None = None, *,
                 game: str = "", output: Path = Path()) -> None:
        self.stream = stream or sys.stderr
        self.game, self.output = game, output  # for the fault lines (results.game_fault_line)
        self.interval = interval
        self.live = live
        self.total = self.done = self.faults = self.start_done = 0
        self.t0 = self.last = 0.0
        self.reasons: Counter[str] = Counter()
        self.cluster: Callable[[], Mapping[str, Any]] | None = None  # a --dask run's chunk counts (the runner's)

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _summary(self) -> None:
        if self.live is not None:
            for line in self.live.lines(force=True):
                self._line(line)

    def start(self, *, total: int, done: int, faults: int) -> None:
        self.total, self.done, self.start_done, self.faults = total, done, done, faults
        self.t0 = self.last = time.monotonic()
        resumed = f", {done} already done" if done else ""
        self._line(f"tournament: {total} games{resumed}")

    def status(self) -> str:
        elapsed = time.monotonic() - self.t0
        n = self.done - self.start_done
        rate = n / elapsed * 60 if elapsed > 0 and n else 0.0
        eta = (self.total - self.done) / (rate / 60) if rate else None
        pct = 100 * self.done / self.total if self.total else 100.0
        eta_text = "–" if eta is None else time.strftime("%H:%M:%S", time.gmtime(eta))
        if self.live is not None and self.live.sprt is not None:
            return f"games {self.done} (cap {self.total})  {rate:.1f} games/min  faults {self.faults}"
        dask = f"\n{cluster_line(self.cluster())}" if self.cluster is not None else ""
        return (f"games {self.done}/{self.total} ({pct:.0f}%)  {rate:.1f} games/min  "
                f"ETA {eta_text}  faults {self.faults}{dask}")

    def advance(self, result: GameResult) -> None:
        self.done += 1
        if self.live is not None:
            self.live.add(result)
        if (line := game_fault_line(result, self.game, self.output)) is not None:
            self.faults += 1
            self._line(line)
        now = time.monotonic()
        if now - self.last >= self.interval and self.done < self.total:
            self.last = now
            self._line(self.status())
            self._summary()

    def finish(self) -> None:
        self._line(self.status())
        self._summary()
