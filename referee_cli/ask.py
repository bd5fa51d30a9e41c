"""`referee ask RECORD N --bot CMD`: re-ask a recorded decision; `--from`: play the game on from it.

The match layer does the work (``referee.match.ask``); this prints what it
found.  docs/debugging.md is the user's guide.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from referee.match.bubblewrap import SandboxMode
from referee.match.types import Limits
from referee.text import shown
from referee_cli.errors import UserError
from referee_cli.options import CpuOption, MemoryOption, OpenFilesOption, ProcessesOption

_DEFAULTS = Limits()

EXIT_REFUSED = 1  # the re-asked bot's reply was refused, or never came

if TYPE_CHECKING:
    from referee.match.ask import Replay



def _where(replay: Replay, n: int) -> str:
    """``seat 2, deal 3, play`` for request ``n``, from the request line itself."""
    from referee.match.runner import game_position


    seat = replay.request(n).seat
    request = json.loads(replay.lines_for(seat, n)[-1].data)
    where = [f"seat {seat}", *(f"{k} {v}" for k, v in game_position(request["state"]).items()), request["decision"]]
    return ", ".join(where)


def register(app: typer.Typer) -> None:
    @app.command("ask", short_help="Re-ask a recorded request to a bot, or play on from it.")
    def ask_command(
        record: Annotated[Path, typer.Argument(
            metavar="RECORD", help="A match record (.jsonl) written by play or run.")],
        n: Annotated[int, typer.Argument(metavar="N", help="The request id (the record's decision `n`).")],
        bot: Annotated[list[str], typer.Option(
            "--bot", "-b", metavar="COMMAND",
            help="Without --from: the bot to ask, in the seat of request N (once). With --from: "
            "the bots that play on, once per team or once per seat (or --bots-from-record).")] = [],  # noqa: B006 (typer builds a fresh list per call from this default)
        from_: Annotated[bool, typer.Option(
            "--from", help="Play the game on from request N: the recorded actions before it, then the bots.")] = False,
        new_record: Annotated[Path | None, typer.Option(
            "--record", help="With --from: where to write the new record (required).")] = None,
        stderr_dir: Annotated[Path | None, typer.Option(
            help="Folder for the bots' stderr (default: none kept without --from; next to the new record with it).")]
        = None,
        bots_from_record: Annotated[bool, typer.Option(
            "--bots-from-record", help="With --from and no --bot: run the commands the record names "
            "(printed first). A record is data: without this flag none of its commands runs.")] = False,
        sandbox: Annotated[SandboxMode, typer.Option(
            help="auto | required | off, as for play; never the record's setting.")] = SandboxMode.AUTO,
        memory_mb: MemoryOption = _DEFAULTS.memory_mb or 0,
        cpu_s: CpuOption = _DEFAULTS.cpu_s or 0,
        max_processes: ProcessesOption = _DEFAULTS.max_processes or 0,
        max_open_files: OpenFilesOption = _DEFAULTS.max_open_files or 0,
        force: Annotated[bool, typer.Option(
            "--force", help="With --from: overwrite NEW if it exists (default: a new name, said).")] = False,
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="Print only the verdict line (with --from: the result line).")] = False,
    ) -> None:
        """Re-ask request N of a recorded game to a bot (a new build of yours), or play on from it (--from).

        The bot gets what its seat got in the recorded game: the same hello and events and its
        earlier requests, whose replies are read and ignored (the recorded action is applied),
        then request N; its reply is judged as in a game. Exit status 0 when the reply is legal,
        1 when it is refused or never comes (with --from: 0, or 3 if the new game ended by a forfeit)."""
        import trio

        from referee.match.ask import Replay, ask, describe_recorded, play_on, recorded_bots
        from referee.match.record import read_record
        from referee_cli.common import bot_specs_for_seats, make_console, resolve_sandbox
        from referee_cli.play import EXIT_FORFEIT, claim_record, limits_from_flags, print_result


        rec = read_record(record)
        replay = Replay(rec)
        # The operator's limits and sandbox; the record gives each seat only its time limits.
        limits = dataclasses.replace(limits_from_flags({
            "--memory-mb": memory_mb, "--cpu-s": cpu_s, "--max-processes": max_processes,
            "--max-open-files": max_open_files}), sandbox=sandbox.value)
        if bots_from_record and (not from_ or bot):
            raise UserError("--bots-from-record goes with --from and without --bot")
        resolve_sandbox(sandbox.value)
        console = make_console()
        if from_:
            if new_record is None:
                raise UserError("--from needs --record NEW: where to write the new game's record")
            if new_record.resolve() == Path(record).resolve():
                raise UserError(f"--record {new_record}: that is the recorded game itself; name a new file")
            if not bot and not bots_from_record:
                raise UserError("--from runs the bots you name: give --bot once per team or per seat, or "
                                "--bots-from-record to run the commands the record names (a record is data)")
            if bot:
                bots = bot_specs_for_seats(replay.spec, replay.options, bot, seed=rec.header.seed)
            else:
                bots = recorded_bots(rec)
                console.print("The record's bot commands (--bots-from-record):", markup=False)
                for s, b in enumerate(bots):
                    where = f"  (in {shown(str(b.cwd))})" if b.cwd else ""
                    console.print(f"  seat {s}: {shown(shlex.join(b.command))}{where}", markup=False)
            new_record = claim_record(new_record, force=force)  # never over an earlier record unless --force
            err_dir = stderr_dir or new_record.with_name(new_record.name.removesuffix(".jsonl") + ".stderr")
            try:
                err_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UserError(f"cannot create {exc.filename}: {exc.strerror}") from None
            result = trio.run(lambda: play_on(rec, n, bots, new_record, limits=limits, stderr_dir=err_dir))
            if not quiet:
                console.print(f"What-if from request {n} of {record}: the recorded actions before it, then the "
                              "bots.", markup=False)
            print_result(result, quiet=quiet)
            if not quiet:
                console.print(f"Check it: referee replay {new_record} --verify", markup=False)
            if result.forfeit:
                raise typer.Exit(EXIT_FORFEIT)
            return
        if new_record is not None or force:
            raise UserError(f"{'--record' if new_record is not None else '--force'} goes with --from "
                            "(without it nothing is recorded)")
        if len(bot) != 1:
            raise UserError(f"give --bot once: the bot to ask (got {len(bot)}); to play on with several, use --from")
        req = replay.request(n)
        spec = bot_specs_for_seats(replay.spec, replay.options, bot * rec.seats, seed=rec.header.seed)[req.seat]
        if stderr_dir is not None:
            try:
                stderr_dir.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise UserError(f"cannot create stderr folder {stderr_dir}: {exc.strerror}") from None
        answer = trio.run(lambda: ask(rec, n, spec, limits=limits, stderr_dir=stderr_dir))
        verdict = "legal" if answer.legal else f"refused: {answer.reason}"
        if quiet:
            console.print(shown(f"verdict: {verdict}: {answer.message}"), markup=False)
            raise typer.Exit(0 if answer.legal else EXIT_REFUSED)
        console.print(f"request {n} ({replay.spec.name}, {_where(replay, n)}): {len(req.legal)} legal actions; "
                      f"asked: {' '.join(spec.command)}", markup=False)
        if answer.earlier:
            differed = (f"; its reply differed from the recorded action at {len(answer.differed)}: "
                        f"{', '.join(map(str, answer.differed[:20]))}{' …' if len(answer.differed) > 20 else ''}"
                        if answer.differed else "; every reply matched the recorded action")
            console.print(f"fed its {answer.earlier} earlier requests (replies ignored, recorded actions applied)"
                          f"{differed}", markup=False)
        reply = "(no complete line)" if answer.reply is None else answer.reply.decode("utf-8", "backslashreplace")
        console.print(shown(f"reply: {reply}"), markup=False)
        console.print(shown(f"verdict: {verdict}: {answer.message}"), markup=False)
        console.print(shown(f"recorded: {rec.names[req.seat]} {describe_recorded(replay, req)}"), markup=False)
        if not answer.legal and answer.stderr_tail:
            console.print("Last stderr lines of the asked bot:")
            for line in answer.stderr_tail[-10:]:
                console.print(f"  | {shown(line)}", markup=False)
        if not answer.legal:
            raise typer.Exit(EXIT_REFUSED)
