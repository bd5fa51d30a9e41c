"""Multi-table bots (protocol version 2): one process serves several games at
once, every line tagged with its table, with real bot processes."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import trio

from referee.match.pool import ProcessPool
from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.types import BotSpec, FaultReason
from referee.match.verify import verify_record

from ..conftest import PATIENT
from .conftest import ROOT

TABLE_BOT = ROOT / "tests" / "fixtures" / "table_bot.py"


def table_bot(name: str, *args: str, tables: int = 8) -> BotSpec:
    return BotSpec(name=name, command=(sys.executable, str(TABLE_BOT), str(tables), *args))


async def play_at_once(tmp_path: Path, games: list[list[BotSpec]], *, pool: bool = True):
    """Play every game at the same time (seed 100 + index), sharing one pool; results and pool."""
    results: dict[int, object] = {}
    async with trio.open_nursery() as nursery:
        shared = ProcessPool(nursery) if pool else None

        async def one(i: int, bots: list[BotSpec]) -> None:
            results[i] = await run_match(
                "back-alley", {}, bots, seed=100 + i, record_path=tmp_path / "records" / f"{i}.jsonl",
                stderr_dir=tmp_path / "stderr" / str(i), hide=[tmp_path], limits=PATIENT, pool=shared)

        try:
            async with trio.open_nursery() as games_nursery:
                for i, bots in enumerate(games):
                    games_nursery.start_soon(one, i, bots)
        finally:
            if shared is not None:
                await shared.aclose()
    return [results[i] for i in range(len(games))], shared


def tables_served(tmp_path: Path) -> list[int]:
    """Every table id a hello named, over all stderr files."""
    text = "".join(p.read_text() for p in (tmp_path / "stderr").rglob("*.log"))
    return [int(t) for t in re.findall(r"hello seat=\d table=(\d+)", text)]


async def test_eight_games_at_once_are_served_by_four_processes_one_per_seat(tmp_path):
    bot = table_bot("t")
    results, shared = await play_at_once(tmp_path, [[bot] * 4 for _ in range(8)])
    assert all(r.fault is None and r.outcome.status in ("win", "draw") for r in results)
    assert shared is not None and shared.started == 4 and shared.live == 0  # never two seats of one game
    assert sorted(tables_served(tmp_path)) == sorted(list(range(8)) * 4)  # each process: tables 0…7
    for i in range(8):
        assert verify_record(read_record(tmp_path / "records" / f"{i}.jsonl")).ok


async def test_a_fault_at_one_table_ends_only_that_game(tmp_path):
    bad, good = table_bot("bad", "--illegal", "40"), table_bot("good")
    # Seat 0 of every game is the one "bad" process; it errs at one of its tables.
    results, shared = await play_at_once(tmp_path, [[bad, good, good, good] for _ in range(4)])
    faults = [r.fault for r in results if r.fault is not None]
    # no action of the game:
    assert len(faults) == 1 and faults[0].reason is FaultReason.INVALID_ACTION and faults[0].seat == 0
    assert sum(r.outcome.status == "forfeit" for r in results) == 1
    assert shared is not None and shared.started == 4


async def test_garbage_without_a_table_faults_every_game_of_that_process_each_with_its_reason(tmp_path):
    bad, good = table_bot("bad", "--garbage", "30"), table_bot("good")
    results, _ = await play_at_once(tmp_path, [[bad, good, good, good] for _ in range(4)])
    assert all(r.fault is not None and r.fault.seat == 0 for r in results)
    assert {r.fault.reason for r in results} == {FaultReason.INVALID_JSON}
    assert all("a line without a table" in r.fault.message for r in results)


async def test_a_crash_faults_every_game_the_process_serves(tmp_path):
    bad, good = table_bot("bad", "--crash", "30"), table_bot("good")
    results, _ = await play_at_once(tmp_path, [[bad, good, good, good] for _ in range(3)])
    assert all(r.fault is not None and r.fault.seat == 0 for r in results)
    assert {r.fault.reason for r in results} == {FaultReason.EXITED}
    assert all("exited with code 3" in r.fault.message for r in results)


async def test_without_a_pool_a_multi_table_bot_plays_one_game_with_tagged_lines(tmp_path):
    results, _ = await play_at_once(tmp_path, [[table_bot("t")] * 4], pool=False)
    assert results[0].fault is None and results[0].outcome.status in ("win", "draw")
    assert tables_served(tmp_path) == [0, 0, 0, 0]
