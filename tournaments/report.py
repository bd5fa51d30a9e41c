"""Presentation: progress display and standings tables (the files are written by standings_files.py).

Progress goes to stderr (a live rich bar on a terminal, plain lines
otherwise); the standings table is the command's output and goes to stdout.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
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
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from .config import describe_overrides
from .results import GameResult, game_fault_line

# ---------------------------------------------------------------------------
# Tables


def _num(x: float | None, fmt: str = "{:+.1f}") -> str:
    return "–" if x is None else fmt.format(x)


def _ci(iv: dict[str, float | None], fmt: str) -> str:
    if iv["value"] is None:
        return "–"
    if iv["lo"] is None:
        return fmt.format(iv["value"])
    return f"{fmt.format(iv['value'])} [{fmt.format(iv['lo'])}, {fmt.format(iv['hi'])}]"


def _pct(iv: dict[str, float | None]) -> str:
    if iv["value"] is None:
        return "–"
    return f"{iv['value']:.0%} [{iv['lo']:.0%}, {iv['hi']:.0%}]"


def sandbox_notes(sandbox: dict[str, Any] | None) -> list[str]:
    """Warnings for standings whose games did not all run isolated (docs/security.md)."""
    if not sandbox:
        return []
    notes = []
    off = sandbox.get("games", {}).get("off", 0)
    if off:
        notes.append(f"WARNING: {off} game{'s' if off != 1 else ''} ran with bots NOT sandboxed")
    if sandbox.get("network"):
        notes.append(f"WARNING: network allowed for {', '.join(sandbox['network'])}")
    return notes


def standings_tables(data: dict[str, Any], title: str = "Standings") -> list[Table]:
    played, total = data["games_played"], data["games_total"]
    notes = [] if data["complete"] else [f"incomplete: {played} of {total} games"]
    notes += sandbox_notes(data.get("sandbox"))
    caption = "; ".join(notes) or None
    main = Table(title=f"{title} ({played} games)", caption=caption, header_style="bold")
    main_columns: list[tuple[str, JustifyMethod]] = [
        ("#", "right"), ("entrant", "left"), ("games", "right"), ("W-D-L", "right"),
        ("win rate [95% Wilson]", "right"), ("score diff/game [95% CI]", "right"),
        ("rating μ±σ", "right"), ("forfeits", "left")]
    for col, justify in main_columns:
        main.add_column(col, justify=justify, no_wrap=True)
    for e in data["entrants"]:
        reasons = ", ".join(f"{k} {v}" for k, v in e["forfeits_by_reason"].items()) or "–"
        rt = e["rating"]
        main.add_row(
            str(e["rank"]), e["name"], str(e["games"]), f"{e['wins']}-{e['draws']}-{e['losses']}",
            _pct(e["win_rate"]),
            _ci(e["score_diff"], "{:+.1f}"),
            f"{rt['mu']:.1f}±{rt['sigma']:.1f}",
            reasons,
        )
    tables = [main]

    names = [e["name"] for e in data["entrants"]]
    h2h = data["head_to_head"]
    if len(names) > 1:
        cross = Table(title="Head to head (row's W-D-L against column)", header_style="bold")
        cross.add_column("", no_wrap=True)
        for n in names:
            cross.add_column(n, justify="right", no_wrap=True)
        for a in names:
            cells = []
            for b in names:
                r = h2h[a].get(b) if a != b else None
                cells.append("·" if r is None or not r["games"] else f"{r['wins']}-{r['draws']}-{r['losses']}")
            cross.add_row(a, *cells)
        tables.append(cross)

    if data["paired"]:
        paired = Table(title="Duplicate deals (A's mean score minus B's per deal, every seating)",
                       header_style="bold")
        paired_columns: list[tuple[str, JustifyMethod]] = [
            ("A", "left"), ("B", "left"), ("deals", "right"), ("A better-equal-B better", "right"),
            ("mean diff [95% CI]", "right"), ("left out (forfeit)", "right")]
        for col, justify in paired_columns:
            paired.add_column(col, justify=justify, no_wrap=True)
        for p in data["paired"]:
            paired.add_row(p["a"], p["b"], str(p["deals"]), f"{p['a_better']}-{p['equal']}-{p['b_better']}",
                           _ci(p["mean_diff"], "{:+.1f}"), str(p["excluded_deals"]))
        tables.append(paired)
    return tables


def print_standings(data: dict[str, Any], console: Console) -> None:
    for table in standings_tables(data):
        console.print(table)
    for line in describe_overrides(data.get("overrides", {})):
        console.print(f"own limits: {line}", markup=False, highlight=False)


# ---------------------------------------------------------------------------
# Progress


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("– games/min" if not speed else f"{speed * 60:.1f} games/min", style="progress.data.speed")


class RichProgress:
    """Live bar on stderr: done/total, rate, ETA, faults so far."""

    def __init__(self, console: Console | None = None, *, game: str = "", output: Path = Path()) -> None:
        self.console = console or Console(stderr=True)
        self.game, self.output = game, output  # for the fault lines (results.game_fault_line)
        self.progress = Progress(
            TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(), RateColumn(),
            TextColumn("ETA"), TimeRemainingColumn(), TimeElapsedColumn(),
            TextColumn("faults {task.fields[faults]}"),
            console=self.console, transient=False,
        )
        self.task: TaskID | None = None  # set by start()
        self.faults = 0

    def start(self, *, total: int, done: int, faults: int) -> None:
        self.faults = faults
        self.progress.start()
        # Created with the resumed games already completed: rich measures speed
        # (and so the ETA) from advances only, i.e. from this run's games.
        self.task = self.progress.add_task("games", total=total, completed=done, faults=faults)

    def advance(self, result: GameResult) -> None:
        if (line := game_fault_line(result, self.game, self.output)) is not None:
            self.faults += 1
            self.progress.console.print(line, markup=False, highlight=False)
        assert self.task is not None, "advance() before start()"
        self.progress.update(self.task, advance=1, faults=self.faults)

    def finish(self) -> None:
        self.progress.stop()


class PlainProgress:
    """Plain lines on a stream, at most one every ``interval`` seconds (and
    one per fault, and one at the end)."""

    def __init__(self, stream: TextIO | None = None, interval: float = 5.0, *, game: str = "",
                 output: Path = Path()) -> None:
        self.stream = stream or sys.stderr
        self.game, self.output = game, output  # for the fault lines (results.game_fault_line)
        self.interval = interval
        self.total = self.done = self.faults = self.start_done = 0
        self.t0 = self.last = 0.0
        self.reasons: Counter[str] = Counter()

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

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
        return (f"games {self.done}/{self.total} ({pct:.0f}%)  {rate:.1f} games/min  "
                f"ETA {eta_text}  faults {self.faults}")

    def advance(self, result: GameResult) -> None:
        self.done += 1
        if (line := game_fault_line(result, self.game, self.output)) is not None:
            self.faults += 1
            self._line(line)
        now = time.monotonic()
        if now - self.last >= self.interval and self.done < self.total:
            self.last = now
            self._line(self.status())

    def finish(self) -> None:
        self._line(self.status())
