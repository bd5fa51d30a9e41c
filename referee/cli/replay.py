"""`referee replay RECORD`: look at, verify and debug a logged game."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.cli.common import make_console, score_table
from referee.cli.errors import UserError
from referee.games import GAMES
from referee.match.record import FaultLine, Record, read_record
from referee.match.verify import verify_record
from referee.replay import RENDERERS, entries_for_seat, public_entries


def header_lines(rec: Record) -> list[str]:
    h = rec.header
    opts = ", ".join(f"{k}={v}" for k, v in h.options.items())
    lines = [f"{h.game} (rules {h.rules_version or '?'}), seed {h.seed}" + (f", {opts}" if opts else "")]
    lines.extend(f"  seat {s.seat} team {s.team}: {s.name}  [{' '.join(s.command)}]" for s in h.seats)
    return lines


def register(app: typer.Typer) -> None:
    @app.command()
    def replay(
        record: Annotated[Path, typer.Argument(help="A match record (.jsonl) written by play or run.")],
        deal: Annotated[int | None, typer.Option(help="Show only this deal (card games).")] = None,
        seat: Annotated[int | None, typer.Option(help="Show only what this seat could see.")] = None,
        verify: Annotated[bool, typer.Option(
            "--verify", help="Re-simulate the record through the engine; exit 1 at the first divergence.")] = False,
        summary: Annotated[bool, typer.Option("--summary", help="Only the score table and result.")] = False,
        html: Annotated[Path | None, typer.Option(
            "--html", help="Write a self-contained HTML page to step through the game (docs/html-replay.md).")] = None,
    ) -> None:
        """Show a recorded game deal by deal (or turn by turn); optionally verify it."""
        rec = read_record(record)
        game = rec.header.game
        if game not in GAMES:
            raise UserError(f"{record}: unknown game {game!r} in the record")
        if seat is not None and not 0 <= seat < rec.seats:
            raise UserError(f"--seat {seat}: this game has seats 0 … {rec.seats - 1}")
        console = make_console()
        if html is not None:
            write_html_replay(rec, html, verify=verify, summary=summary, deal=deal, seat=seat)
            console.print(f"Wrote {html}", markup=False)
            return
        if verify:
            result = verify_record(rec)
            console.print(("OK: " if result.ok else "DIVERGENCE: ") + result.message, markup=False)
            if rec.truncated:
                console.print(f"note: {truncation_note(rec)}", markup=False)
            raise typer.Exit(0 if result.ok else 1)
        entries = rec.entries if seat is None else entries_for_seat(rec.entries, seat)
        for line in header_lines(rec):
            console.print(line, markup=False)
        if seat is not None:
            console.print(f"(seen from seat {seat})")
        if not summary:
            for line in RENDERERS[game].render(entries, seat=seat, deal=deal):
                console.print(line, markup=False)
        table = score_table(game, public_entries(rec.entries), title="Score table")
        if table is not None and deal is None:
            console.print(table)
        for e in entries:
            if isinstance(e, FaultLine):
                console.print(f"Fault: seat {e.seat} — {e.reason}: {e.message}", markup=False)
                for line in e.stderr_tail[-10:]:
                    console.print(f"  | {line}", markup=False)
        if rec.result is not None:
            o = rec.result.outcome
            winners = ", ".join(f"team {t}" for t in o.winners) or "nobody"
            console.print(f"Result: {o.status} ({o.reason}); winners: {winners}; "
                          f"scores {o.scores}; {rec.result.decisions} decisions", markup=False)
        if rec.truncated:
            console.print(f"note: {truncation_note(rec)}", markup=False)


def write_html_replay(rec: Record, path: Path, *, verify: bool, summary: bool, deal: int | None,
                      seat: int | None) -> None:
    from referee.replay.html import ReplayError, write_html

    clash = [flag for flag, given in (("--verify", verify), ("--summary", summary), ("--deal", deal is not None),
                                      ("--seat", seat is not None)) if given]
    if clash:
        raise UserError(f"--html writes the whole game (pick a deal or a seat's view in the page); "
                        f"drop {', '.join(clash)}")
    try:
        write_html(rec, path)
    except ReplayError as exc:
        raise UserError(f"{rec.path}: cannot replay: {exc}") from None
    except OSError as exc:
        raise UserError(f"--html {path}: {exc.strerror or exc}") from None


def truncation_note(rec: Record) -> str:
    last = rec.line_numbers[-1] if rec.line_numbers else 1
    if rec.bad_line:
        return (f"record is corrupt at line {rec.bad_line} ({rec.bad_reason}); shown up to line {last}, "
                "the last complete line before it")
    return f"record is truncated: the game did not finish; shown up to line {last}, its last complete line"
