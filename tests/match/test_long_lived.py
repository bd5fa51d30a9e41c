"""Long-lived bots (protocol version 2): one process plays many games, through
``referee.match.pool``, with real bot processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from referee.match import pool as pool_module
from referee.match.pool import ProcessPool
from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.types import BotSpec, FaultReason, Limits
from referee.match.verify import verify_record

from ..conftest import PATIENT
from .conftest import LISTENER, ROOT

REMEMBERING = ROOT / "tests" / "fixtures" / "remembering_bot.py"


def remembering(name: str, *args: str) -> BotSpec:
    return BotSpec(name=name, command=(sys.executable, str(REMEMBERING), *args))


def seating(a: BotSpec, b: BotSpec, arrangement: int) -> list[BotSpec]:
    """Back Alley seats 0 and 2 are team 0: arrangement 0 gives them to ``a``, 1 to ``b``."""
    first, second = (a, b) if arrangement == 0 else (b, a)
    return [first, second, first, second]


async def play_all(tmp_path: Path, games: list[tuple[int, list[BotSpec]]], *, pool: bool = True,
                   limits: Limits = PATIENT, between_s: float = 0.0):
    """Play ``games`` (seed, bots) one after another, sharing one pool (or none); the results and the pool."""
    results = []
    async with trio.open_nursery() as nursery:
        shared = ProcessPool(nursery) if pool else None
        try:
            for i, (seed, bots) in enumerate(games):
                if i:
                    await trio.sleep(between_s)
                results.append(await run_match(
                    "back-alley", {}, bots, seed=seed, record_path=tmp_path / "records" / f"{i}.jsonl",
                    stderr_dir=tmp_path / "stderr" / str(i), hide=[tmp_path], limits=limits, pool=shared))
        finally:
            if shared is not None:
                await shared.aclose()
    return results, shared


def hellos(tmp_path: Path, game: int) -> dict[int, str]:
    """Seat -> process id (its own random one) of the remembering bot that said hello in that game (from its stderr)."""
    out = {}
    for path in (tmp_path / "stderr" / str(game)).glob("seat*.log"):
        for m in re.finditer(r"hello pid=(\w+) seat=(\d+)", path.read_text()):
            out[int(m[2])] = m[1]
    return out


def all_stderr(tmp_path: Path) -> str:
    return "".join(p.read_text() for p in (tmp_path / "stderr").rglob("*.log"))


def comparable(record_path: Path) -> list[dict]:
    """A record's entries without what is timing (decision ms, start time, duration)."""
    lines = [json.loads(line) for line in record_path.read_text().splitlines()]
    return [{k: v for k, v in e.items() if k not in ("ms", "started_at", "duration_s")} for e in lines]


async def test_a_long_lived_bot_plays_game_after_game_in_one_process_and_each_record_is_as_if_fresh(tmp_path):
    a, b = remembering("a"), remembering("b")
    games = [(seed, seating(a, b, 0)) for seed in (11, 12, 13)]
    results, shared = await play_all(tmp_path, games)
    assert [r.outcome.status for r in results] == ["win", "win", "win"] and all(r.fault is None for r in results)
    assert shared is not None and shared.started == 4 and shared.live == 0  # 4 processes for 12 seats; all ended
    procs = [set(hellos(tmp_path, g).values()) for g in range(3)]
    assert len(procs[0]) == 4 and procs[0] == procs[1] == procs[2]  # the same four processes (seats may swap)
    # A record does not depend on which process played the game.
    fresh, _ = await play_all(tmp_path / "fresh", [games[2]], pool=False)
    assert comparable(tmp_path / "records" / "2.jsonl") == comparable(tmp_path / "fresh" / "records" / "0.jsonl")
    assert all(verify_record(read_record(tmp_path / "records" / f"{i}.jsonl")).ok for i in range(3))


async def test_duplicate_deals_never_reach_a_process_that_saw_the_deal(tmp_path, monkeypatch):
    a, b = remembering("a"), remembering("b")
    games = [(seed, seating(a, b, arr)) for seed in (21, 22) for arr in (0, 1)]
    results, shared = await play_all(tmp_path / "guarded", games)
    assert all(r.fault is None for r in results)
    assert shared is not None and shared.started == 8  # two seatings of one deal: two sets of processes
    assert "SEEN TWICE" not in all_stderr(tmp_path / "guarded")
    pids = [set(hellos(tmp_path / "guarded", g).values()) for g in range(4)]
    assert not pids[0] & pids[1] and not pids[2] & pids[3]  # never one deal twice in a process
    assert pids[2] | pids[3] == pids[0] | pids[1] and len(pids[0] | pids[1]) == 8  # reused across deals

    # The same games, had the pool not kept the rule: the bot notices (so the check above can fail).
    monkeypatch.setattr(pool_module._Live, "seeds", property(lambda self: set(), lambda self, v: None))
    await play_all(tmp_path / "unguarded", games)
    assert "SEEN TWICE" in all_stderr(tmp_path / "unguarded")


async def test_a_version_1_bot_gets_a_process_per_game_as_before(tmp_path):
    v1 = BotSpec(name="listener", command=(sys.executable, str(LISTENER), "0", "0"))
    results, shared = await play_all(tmp_path, [(5, [v1] * 4), (6, [v1] * 4)])
    assert all(r.fault is None for r in results)
    assert shared is not None and shared.started == 8 and shared.live == 0


async def test_a_process_whose_seat_faulted_is_replaced_and_the_others_play_on(tmp_path):
    a, b = remembering("a"), remembering("b", "--illegal", "2")
    games = [(seed, seating(a, b, 0)) for seed in (31, 32, 33)]
    results, shared = await play_all(tmp_path, games)
    assert results[0].fault is None and results[2].fault is None
    fault = results[1].fault
    # no action of the game:
    assert fault is not None and fault.reason is FaultReason.INVALID_ACTION and fault.seat in (1, 3)
    second, third = hellos(tmp_path, 1), set(hellos(tmp_path, 2).values())
    assert second[fault.seat] not in third  # the faulted process was not given game 3
    # Team a, and b's other seat (its game ended by the other's fault, not its own), played on.
    assert {second[s] for s in range(4) if s != fault.seat} < third
    assert shared is not None and shared.started == 5


async def test_a_bot_that_says_bye_gets_its_game_played_by_a_fresh_process(tmp_path):
    a = remembering("a", "--bye", "2")
    results, shared = await play_all(tmp_path, [(41, [a] * 4), (42, [a] * 4)])
    assert all(r.fault is None and r.outcome.status == "win" for r in results)
    assert shared is not None and shared.started == 8
    assert not set(hellos(tmp_path, 0).values()) & set(hellos(tmp_path, 1).values())


async def test_output_between_games_retires_the_process_without_a_fault(tmp_path):
    a = remembering("a", "--chatter", "1")
    # (The pause lets the line arrive before the next game is handed out; one that comes
    # later is read in that game's handshake, and is that game's fault: unexpected output.)
    results, shared = await play_all(tmp_path, [(51, [a] * 4), (52, [a] * 4)], between_s=0.5)
    assert all(r.fault is None for r in results)
    assert shared is not None and shared.started == 8


async def test_a_reused_process_has_the_decision_limit_for_its_handshake(tmp_path):
    limits = Limits(decision_s=0.5, handshake_s=30.0)
    a, b = remembering("a"), remembering("b", "--slow-hello", "2:2")
    results, _ = await play_all(tmp_path, [(61, seating(a, b, 0)), (62, seating(a, b, 0))], limits=limits)
    assert results[0].fault is None
    fault = results[1].fault
    assert fault is not None and fault.reason is FaultReason.HANDSHAKE_TIMEOUT and "0.5s" in fault.message


async def test_referee_play_keeps_one_game_per_process_and_a_long_lived_bot_exits_at_end_of_input(tmp_path):
    a = remembering("a")
    results, _ = await play_all(tmp_path, [(71, [a] * 4)], pool=False)
    assert results[0].fault is None and results[0].outcome.status == "win"


@pytest.mark.parametrize("bot", ["random_bot.py", "python_random_bot.py"])
async def test_the_shipped_python_random_bots_play_many_games_per_process(tmp_path, bot):
    spec = BotSpec(name="r", command=(sys.executable, str(ROOT / "sample_bots" / bot), "7"))
    results, shared = await play_all(tmp_path, [(81, [spec] * 4), (82, [spec] * 4)])
    assert all(r.fault is None for r in results)
    assert shared is not None and shared.started == 4


TOURNAMENT = """\
game = "back-alley"
seed = 9
games_per_pairing = 2
jobs = 2
secret_file = "secret.hex"
[limits]
decision_s = 20.0
handshake_s = 60.0
[[entrants]]
name = "a"
command = "{python} {bot}"
[[entrants]]
name = "b"
command = "{python} {bot}"
[[entrants]]
name = "c"
command = "{python} {bot}"
"""


@pytest.mark.slow
def test_kill_9_with_long_lived_bots_leaves_no_process_and_the_resume_is_exact(tmp_path, monkeypatch):
    from tests.tournaments.helpers import SECRET, result_lines

    from .hostile import assert_no_survivors, count_lines, kill_when, marked_processes

    toml = tmp_path / "t.toml"
    toml.write_text(TOURNAMENT.format(python=sys.executable, bot=REMEMBERING))
    (tmp_path / "secret.hex").write_text(SECRET.hex())
    referee = [sys.executable, "-m", "referee", "run", str(toml), "-q", "--output"]
    broken, whole = tmp_path / "broken", tmp_path / "whole"
    with marked_processes(monkeypatch) as token:
        proc = subprocess.Popen([*referee, str(broken)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        kill_when(proc, lambda: count_lines(broken / "results.jsonl") >= 3, timeout=240, group=True)
        assert_no_survivors(token, within_s=10)  # the workers saw their stdin end and ended every kept process
    assert 3 <= count_lines(broken / "results.jsonl") < 12
    for out in (broken, whole):
        res = subprocess.run([*referee, str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr
    assert sorted(result_lines(broken)) == list(range(12))
    assert result_lines(broken) == result_lines(whole)
    assert (broken / "standings.json").read_bytes() == (whole / "standings.json").read_bytes()
    assert "SEEN TWICE" not in "".join(p.read_text() for p in broken.rglob("*.log"))
