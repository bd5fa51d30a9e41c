"""Games played by worker processes (tournaments/workers.py), with real bots:
the same results as in-process play, each game's referee and bots on one core,
and every process gone on every path (finish, cancellation, a dead worker)."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

import pytest
import trio

from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits
from tournaments.config import parse, resolve
from tournaments.runner import TournamentError, run_tournament
from tournaments.workers import WorkerError, can_pin, open_worker_pool

from ..match.hostile import assert_no_survivors, command_line, live_marked, marked_processes
from .helpers import SECRET, result_lines

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
SLOW_BOT = ROOT / "tests" / "fixtures" / "slow_bot.py"
# A random bot that first writes the cores it may run on to its stderr.
AFFINITY_BOT = ("import os, sys; sys.stderr.write('cores=%s\\n' % sorted(os.sched_getaffinity(0))); "
                "sys.stderr.flush(); os.execv(sys.executable, [sys.executable, sys.argv[1]] + sys.argv[2:])")
FAST = Limits(handshake_s=10.0, decision_s=5.0, grace_s=0.2, term_s=0.2)


def tournament(out: Path, *, command: list[str] | None = None, jobs: int = 2, **overrides):
    command = command or [sys.executable, str(RANDOM_BOT), "{seed}"]
    data = {"game": "back-alley", "seed": 11, "games_per_pairing": 2, "jobs": jobs, "output": str(out),
            "entrants": [{"name": n, "command": command} for n in ("a", "b")]}
    data.update(overrides)
    return resolve(parse(data), ROOT)


def bots(n: int = 4, script: Path = RANDOM_BOT) -> list[BotSpec]:
    return [BotSpec("random", (sys.executable, str(script), str(s))) for s in range(n)]


async def test_workers_give_exactly_the_results_of_playing_in_process(tmp_path):
    # One secret for both directories, so both deal the same cards.
    in_process = await run_tournament(tournament(tmp_path / "here").with_secret(SECRET), play=run_match)
    in_workers = await run_tournament(tournament(tmp_path / "workers").with_secret(SECRET))
    assert in_process.played == in_workers.played == 4
    assert result_lines(tmp_path / "here") == result_lines(tmp_path / "workers")
    for game_id in range(4):  # the records match too, line for line, but for timings
        here = (tmp_path / "here" / "records" / f"{game_id:06d}.jsonl").read_text().splitlines()
        there = (tmp_path / "workers" / "records" / f"{game_id:06d}.jsonl").read_text().splitlines()
        assert len(here) == len(there) > 100
        assert [line for line in here if '"record":"decision"' not in line and '"header"' not in line
                and '"result"' not in line] == \
               [line for line in there if '"record":"decision"' not in line and '"header"' not in line
                and '"result"' not in line]


@pytest.mark.skipif(not can_pin() or len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores and sched_setaffinity")
async def test_each_game_runs_its_bots_on_its_worker_core_and_games_use_every_core(tmp_path):
    command = [sys.executable, "-c", AFFINITY_BOT, str(RANDOM_BOT), "{seed}"]
    await run_tournament(tournament(tmp_path / "out", command=command, games_per_pairing=4))
    seen: set[int] = set()
    for game_dir in sorted((tmp_path / "out" / "stderr").iterdir()):
        logs = [p.read_text() for p in sorted(game_dir.iterdir())]
        assert len(logs) == 4
        cores = {line for text in logs for line in text.splitlines() if line.startswith("cores=")}
        assert len(cores) == 1, f"{game_dir.name}: bots of one game on different cores: {cores}"
        (only,) = cores
        assert only.count(",") == 0, f"a bot may run on several cores: {only}"
        seen.add(int(only.strip("cores=[]")))
    assert seen == set(sorted(os.sched_getaffinity(0))[:2])


async def test_without_pinning_bots_keep_every_core(tmp_path):
    command = [sys.executable, "-c", AFFINITY_BOT, str(RANDOM_BOT), "{seed}"]
    await run_tournament(tournament(tmp_path / "out", command=command, games_per_pairing=1, pin_cores=False))
    everything = f"cores={sorted(os.sched_getaffinity(0))}"
    for game_dir in (tmp_path / "out" / "stderr").iterdir():
        for log in game_dir.iterdir():
            assert everything in log.read_text()


async def test_a_game_the_worker_cannot_play_is_a_worker_error_not_a_hang(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the worker saves the bug's traceback
    async with open_worker_pool(1, limits=FAST) as pool:
        with pytest.raises(WorkerError, match="worker process [0-9]+: .*unknown game 'no-such-game'") as caught:
            await pool.play("no-such-game", {}, bots(), seed=1, limits=FAST)
        [saved] = tmp_path.glob("referee-bug-*.txt")
        assert f"(worker traceback in {saved})" in str(caught.value)
        assert "unknown game 'no-such-game'" in saved.read_text()
        # The worker keeps serving after a failed job.
        result = await pool.play("back-alley", {}, bots(), seed=1, limits=FAST, record_path=tmp_path / "r.jsonl")
        assert result.fault is None and result.outcome.status in ("win", "draw") and result.decisions > 100


async def test_games_handed_to_one_worker_at_the_same_moment_all_play(tmp_path):
    """jobs > cores: several games start on one worker in the same scheduler tick,
    so their job lines are sent concurrently down one pipe."""
    results = {}
    async with open_worker_pool(1, limits=FAST) as pool:

        async def one(seed: int) -> None:
            results[seed] = await pool.play("back-alley", {}, bots(), seed=seed, limits=FAST)

        async with trio.open_nursery() as nursery:
            for seed in range(3):
                nursery.start_soon(one, seed)
    assert sorted(results) == [0, 1, 2]
    assert all(r.fault is None and r.decisions > 100 for r in results.values())
    assert len({r.seed for r in results.values()}) == 3


async def test_a_dead_worker_stops_the_tournament_and_leaves_no_process(tmp_path, monkeypatch):
    t = tournament(tmp_path / "out", command=[sys.executable, str(SLOW_BOT), "0.05"], jobs=1)
    with marked_processes(monkeypatch) as token:
        async def kill_the_worker_once_bots_run() -> None:
            while True:
                marked = live_marked(token)
                workers = [p for p in marked if "tournaments.workers" in command_line(p)]
                if workers and len(marked) >= 5:
                    os.kill(workers[0].pid, signal.SIGKILL)
                    return
                await trio.sleep(0.02)

        with pytest.raises(ExceptionGroup) as caught:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(kill_the_worker_once_bots_run)
                await run_tournament(t)
        errors = caught.value.subgroup(TournamentError)
        assert errors is not None and len(errors.exceptions) == 1
        assert "worker process" in str(errors.exceptions[0]) and "killed by SIGKILL" in str(errors.exceptions[0])
        # Its bots see the end of their stdin and leave.
        assert_no_survivors(token, within_s=5)


async def test_cancelling_the_tournament_stops_workers_mid_game_and_their_bots(tmp_path, monkeypatch):
    t = tournament(tmp_path / "out", command=[sys.executable, str(SLOW_BOT), "0.2"])  # 8 s a game
    with marked_processes(monkeypatch) as token:
        with trio.move_on_after(2) as scope:
            await run_tournament(t)
        assert scope.cancelled_caught
        assert_no_survivors(token, within_s=5)
    records = list((tmp_path / "out" / "records").glob("*.jsonl"))
    assert records, "games were running when the run was cancelled"
    assert not (tmp_path / "out" / "results.jsonl").read_bytes()  # no game finished, none claimed


REMEMBERING = ROOT / "tests" / "fixtures" / "remembering_bot.py"


async def test_workers_say_which_bots_they_keep_and_only_processes_that_play_many_games_count(tmp_path):
    same = [BotSpec("r", (sys.executable, str(RANDOM_BOT), "7"))] * 4  # "games": "many", one command
    async with open_worker_pool(1, limits=FAST) as pool:
        await pool.play("back-alley", {}, bots(), seed=1, limits=FAST)  # a command per seat: none recurs
        assert pool.kept == set()
        await pool.play("back-alley", {}, same, seed=2, limits=FAST)
        assert pool.kept == {"r"}


@pytest.mark.slow
async def test_long_lived_bots_need_one_set_of_processes_per_worker_for_duplicate_deals(tmp_path):
    """Both seatings of every deal go to different workers (the dispatch lets a later
    game go first, or the last seating waits for the other worker): with two workers,
    or one that plays both seatings at once, 8 processes play 12 games.  (The
    workers here are even, so no game waits so long that new processes are cheaper.)"""
    # Entrant a thinks for a while on every ace it is dealt: each deal's two seatings take
    # different times, so in game-id order a worker is often free for the other seating of its deal.
    entrants = [{"name": "a", "command": [sys.executable, str(REMEMBERING), "--slow-on", "A:0.05"]},
                {"name": "b", "command": [sys.executable, str(REMEMBERING)]}]
    t = tournament(tmp_path / "out", games_per_pairing=6, entrants=entrants,
                   limits={"handshake_s": 30.0, "decision_s": 10.0})
    run = await run_tournament(t.with_secret(SECRET))
    assert run.played == 12 and all(r.fault is None for r in run.results.values())
    stderr = "".join(p.read_text() for p in (tmp_path / "out").rglob("*.log"))
    assert "SEEN TWICE" not in stderr
    processes = set(re.findall(r"hello pid=(\w+)", stderr))
    assert len(processes) == 8  # two entrants, two seats each, two sets (one per worker or per seating)
