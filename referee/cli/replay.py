"""`referee replay RECORD`: look at, verify and debug a logged game."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from referee.cli.errors import UserError

if TYPE_CHECKING:
    from referee.match.record import Record


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
    ) -> None:
        """Show a recorded game deal by deal (or turn by turn); optionally verify it."""
        # Imported here, not above: `referee --help` and the other commands need none of it,
        # and a sound record's --verify needs only the verifier.
        from referee.match.verify import verify_fast, verify_record

        if verify and (fast := verify_fast(record)) is not None:  # a sound record, without parsing it all
            header, result = fast
            if seat is not None and not 0 <= seat < len(header.seats):
                raise UserError(f"--seat {seat}: this game has seats 0 … {len(header.seats) - 1}")
            print("OK: " + result.message)  # one plain line, as the console prints it below
            raise typer.Exit(0)
        from referee.cli.common import make_console, score_table
        from referee.games import GAMES
        from referee.match.record import FaultLine, read_record
        from referee.replay import RENDERERS, entries_for_seat, public_entries

        rec = read_record(record)
        game = rec.header.game
        if game not in GAMES:
            raise UserError(f"{record}: unknown game {game!r} in the record")
        if seat is not None and not 0 <= seat < rec.seats:
            raise UserError(f"--seat {seat}: this game has seats 0 … {rec.seats - 1}")
        console = make_console()
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


def truncation_note(rec: Record) -> str:
    last = rec.line_numbers[-1] if rec.line_numbers else 1
    if rec.bad_line:
        return (f"record is corrupt at line {rec.bad_line} ({rec.bad_reason}); shown up to line {last}, "
                "the last complete line before it")
    return f"record is truncated: the game did not finish; shown up to line {last}, its last complete line"
