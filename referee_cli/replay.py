"""`referee replay RECORD`: look at, verify and debug a logged game."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from referee.text import shown
from referee_cli.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

    from referee.match.record import FaultLine, Record
    from referee.replay import Renderer


def header_lines(rec: Record) -> list[str]:
    h = rec.header
    opts = ", ".join(f"{k}={v}" for k, v in h.options.items())
    lines = [f"{h.game} (rules {h.rules_version or '?'}), seed {h.seed}" + (f", {opts}" if opts else "")]
    lines.extend(f"  seat {s.seat} team {s.team}: {name}  [{' '.join(s.command)}]"
                 for s, name in zip(h.seats, rec.names, strict=True))
    return [shown(line) for line in lines]  # a record's names, commands and options are anyone's


def register(app: typer.Typer) -> None:
    @app.command(short_help="Show a recorded game; verify it; rebuild a request.")
    def replay(
        record: Annotated[Path, typer.Argument(
            metavar="RECORD", help="A match record (.jsonl) written by play or run.")],
        deal: Annotated[int | None, typer.Option(help="Show only this deal (card games).")] = None,
        seat: Annotated[int | None, typer.Option(help="Show only what this seat could see.")] = None,
        verify: Annotated[bool, typer.Option(
            "--verify", help="Re-simulate the record through the engine; exit 1 at the first divergence.")] = False,
        summary: Annotated[bool, typer.Option("--summary", help="Only the score table and result.")] = False,
        turn: Annotated[int | None, typer.Option(help="Show only this turn (Pegs and Jokers).")] = None,
        turns: Annotated[str | None, typer.Option(
            help="Show only turns A-B, e.g. 100-120 (Pegs and Jokers).")] = None,
        board_every: Annotated[int | None, typer.Option(
            help="Draw the whole board every K turns instead of the sides a move changed (Pegs and Jokers).")] = None,
        html: Annotated[Path | None, typer.Option(
            "--html", help="Write a self-contained HTML page to step through the game (docs/html-replay.md).")] = None,
        request: Annotated[int | None, typer.Option(
            "--request", metavar="N", help="Print, byte for byte, the request line the bot got at request id N "
            "(the record's decision `n`), rebuilt from the record.")] = None,
        events: Annotated[bool, typer.Option(
            "--events", help="With --request: first the event lines its seat got since its previous request.")] = False,
        history: Annotated[bool, typer.Option(
            "--history", help="With --request: every line its seat got, from hello to that request.")] = False,
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="Print only the result line (--verify: its verdict; --html: nothing).")] = False,
        wide: Annotated[bool, typer.Option(
            "--wide", help="The score table whole, however wide, instead of fitted to the screen.")] = False,
    ) -> None:
        """Show a recorded game deal by deal (or turn by turn); optionally verify it."""
        if (events or history) and request is None:
            raise UserError("--events and --history go with --request N")
        # Imported here, not above: `referee --help` and the other commands need none of it,
        # and a sound record's --verify needs only the verifier.
        from referee.match.verify import verify_fast, verify_record

        if verify and html is None and request is None and (fast := verify_fast(record)) is not None:
            header, result = fast  # a sound record, checked without its models
            if seat is not None and not 0 <= seat < len(header["seats"]):
                raise UserError(f"--seat {seat}: this game has seats 0 … {len(header['seats']) - 1}")
            print(shown("OK: " + result.message))  # one plain line, as the console prints it below
            raise typer.Exit(0)
        from referee.games import GAMES
        from referee.match.record import FaultLine, read_record
        from referee.replay import RENDERERS, TurnRenderer, entries_for_seat, public_entries, rules_version_problem
        from referee_cli.common import make_console, print_score_table

        rec = read_record(record)
        if request is not None:
            print_request(rec, request, events=events, history=history)
            return
        game = rec.header.game
        if game not in GAMES:
            raise UserError(f"{record}: unknown game {game!r} in the record")
        if seat is not None and not 0 <= seat < rec.seats:
            raise UserError(f"--seat {seat}: this game has seats 0 … {rec.seats - 1}")
        renderer = RENDERERS[game]
        turn_range = parts_wanted(renderer, game, deal, turn, turns, board_every)
        console = make_console()
        if html is not None:
            if not verify and (problem := rules_version_problem(rec.header)) is not None:
                raise UserError(f"{record}: {problem}")
            write_html_replay(rec, html, verify=verify, summary=summary, deal=deal, seat=seat)
            if not quiet:
                console.print(f"Wrote {html}", markup=False)
            return
        if verify:
            result = verify_record(rec)
            console.print(shown(("OK: " if result.ok else "DIVERGENCE: ") + result.message), markup=False)
            if rec.truncated:
                console.print(f"note: {truncation_note(rec)}", markup=False)
            raise typer.Exit(0 if result.ok else 1)
        if (problem := rules_version_problem(rec.header)) is not None:
            raise UserError(f"{record}: {problem}")
        entries = rec.entries if seat is None else entries_for_seat(rec.entries, seat)
        if quiet:
            print_outcome(rec, console)
            return
        for line in header_lines(rec):
            console.print(line, markup=False)
        if seat is not None:
            console.print(f"(seen from seat {seat})")
        if not summary:
            if isinstance(renderer, TurnRenderer):
                lines = renderer.render(entries, seat=seat, turns=turn_range, board_every=board_every)
            else:
                lines = renderer.render(entries, seat=seat, deal=deal)
            for line in lines:
                console.print(shown(line), markup=False)
        if deal is None and turn_range is None:
            print_score_table(console, game, public_entries(rec.entries), title="Score table", wide=wide)
        for e in entries:
            if isinstance(e, FaultLine):
                for line in fault_lines(e, record):
                    console.print(line, markup=False)
        print_outcome(rec, console)


def print_outcome(rec: Record, console: Console) -> None:
    """The result line, and the note saying why a record has none (or is cut short)."""
    if rec.result is not None:
        o = rec.result.outcome
        winners = ", ".join(f"team {t}" for t in o.winners) or "nobody"
        console.print(shown(f"Result: {o.status} ({o.reason}); winners: {winners}; "
                            f"scores {o.scores}; {rec.result.decisions} decisions"), markup=False)
    if rec.truncated:
        console.print(f"note: {truncation_note(rec)}", markup=False)


def fault_lines(fault: FaultLine, record: Path) -> list[str]:
    """A record's ``fault`` line as the text replay shows it: the reason, where the game was,
    the refused request and its legal list, the offending output, the command that prints
    that request, and the last lines of the bot's stderr."""
    from referee.match.types import replay_command

    lines = [f"Fault: seat {fault.seat} — {fault.reason}: {fault.message}"]
    where = [f"deal {fault.deal}"] if fault.deal is not None else []
    if fault.turn is not None and fault.deal is None:
        where.append(f"turn {fault.turn}")
    if fault.request is not None:
        where.append(f"request {fault.request}")
    if where:
        legal = ""
        if fault.legal is not None:
            more = len(fault.legal) - 12
            listed = " ".join(fault.legal[:12]) + (f" and {more} more" if more > 0 else "")
            legal = f" (legal: {listed})" if fault.legal else " (legal: none)"
        lines.append(f"  at {', '.join(where)}{legal}")
    if fault.output is not None:
        size = f"{fault.output_bytes} bytes" if fault.output_bytes is not None else "output"
        lines.append(f"  it wrote ({size}): {fault.output}")
    if fault.request is not None:
        lines.append(f"  the request: {replay_command(record, fault.request)}")
    lines += [f"  | {line}" for line in fault.stderr_tail[-10:]]
    return [shown(line) for line in lines]  # the message, the output and the stderr are the bot's


def parts_wanted(renderer: Renderer, game: str, deal: int | None, turn: int | None, turns: str | None,
                 board_every: int | None) -> tuple[int, int] | None:
    """Check the options that pick part of a game; the (first, last) turns to show, if any."""
    from referee.games import GAMES

    title = GAMES[game].title
    if renderer.unit == "deal":
        for flag, value in (("--turn", turn), ("--turns", turns), ("--board-every", board_every)):
            if value is not None:
                raise UserError(f"{flag}: {title} is played in deals, not turns; use --deal K")
        if deal is not None and deal < 1:
            raise UserError(f"--deal {deal}: deals are numbered from 1")
        return None
    if deal is not None:
        raise UserError(f"--deal: {title} is one deal played in turns; use --turn N or --turns A-B")
    if board_every is not None and board_every < 1:
        raise UserError(f"--board-every {board_every}: give a number of turns ≥ 1")
    if turn is not None and turns is not None:
        raise UserError("--turn and --turns: give one of them")
    if turn is not None:
        if turn < 1:
            raise UserError(f"--turn {turn}: turns are numbered from 1")
        return turn, turn
    if turns is None:
        return None
    first, sep, last = turns.partition("-")
    if not (sep and first.strip().isdigit() and last.strip().isdigit()):
        raise UserError(f"--turns {turns!r}: give two turn numbers as A-B, e.g. 100-120")
    a, b = int(first), int(last)
    if not 1 <= a <= b:
        raise UserError(f"--turns {turns}: need 1 ≤ A ≤ B")
    return a, b


def write_html_replay(rec: Record, path: Path, *, verify: bool, summary: bool, deal: int | None,
                      seat: int | None) -> None:
    from referee.replay.html import RecordDiverged, write_html

    clash = [flag for flag, given in (("--verify", verify), ("--summary", summary), ("--deal", deal is not None),
                                      ("--seat", seat is not None)) if given]
    if clash:
        raise UserError(f"--html writes the whole game (pick a deal or a seat's view in the page); "
                        f"drop {', '.join(clash)}")
    try:
        write_html(rec, path)
    except RecordDiverged as exc:
        raise UserError(f"{rec.path}: cannot replay: {exc}") from None
    except OSError as exc:
        raise UserError(f"--html {path}: {exc.strerror or exc}") from None


def print_request(rec: Record, n: int, *, events: bool, history: bool) -> None:
    """``--request N``: the request line (and before it the seat's events, or its whole history), raw."""
    from referee.match.ask import Replay

    replay = Replay(rec)
    seat = replay.request(n).seat
    lines = replay.lines_for(seat, n)
    if not history:
        start = len(lines) - 1
        if events:
            while start > 1 and lines[start - 1].kind == "event":
                start -= 1
        lines = lines[start:]
    out = sys.stdout.buffer
    out.write(b"".join(line.data for line in lines))
    out.flush()


def truncation_note(rec: Record) -> str:
    last = rec.line_numbers[-1] if rec.line_numbers else 1
    if rec.bad_line:
        return (f"record is corrupt at line {rec.bad_line} ({rec.bad_reason}); shown up to line {last}, "
                "the last complete line before it")
    return f"record is truncated: the game did not finish; shown up to line {last}, its last complete line"
