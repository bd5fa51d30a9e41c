"""Fault paths beyond the matrix: spawning, a bot that stops reading, the
limits a bot actually runs under, descendants that leave the bot's session,
and caps that catch a bot between its turns or spread over its children."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import structlog
import structlog.testing
import trio

from referee.match.bot import BotFault, BotProcess
from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.types import BotSpec, FaultReason, Limits
from referee.match.verify import verify_record

from .hostile import FAST, MISBEHAVING, assert_no_survivors, marked_processes, pids_in, random_bot


@contextmanager
def every_log_line() -> Iterator[list[dict]]:
    """The log entries made inside, at every level, whatever level an earlier test configured."""
    old = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with structlog.testing.capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(**old)


def misbehaving(name: str, *args: str) -> BotSpec:
    return BotSpec(name=name, command=(sys.executable, str(MISBEHAVING / f"{name}.py"), *args))


async def play_with(bad: BotSpec, seat: int, tmp_path, limits: Limits = FAST, game: str = "back-alley"):
    bots = [random_bot(200 + s) for s in range(4)]
    bots[seat] = bad
    return await run_match(game, {}, bots, seed=9, record_path=tmp_path / "game.jsonl", limits=limits,
                           stderr_dir=tmp_path / "stderr")


def assert_forfeit(result, seat: int, reason: FaultReason, tmp_path) -> None:
    assert result.outcome.status == "forfeit" and result.outcome.reason == reason.value, result.outcome
    assert result.outcome.detail["seat"] == seat and result.outcome.winners == (1 - seat % 2,)
    assert result.fault is not None and result.fault.seat == seat and result.fault.reason is reason
    rec = read_record(tmp_path / "game.jsonl")
    (line,) = [e for e in rec.entries if e.record == "fault"]
    assert line.seat == seat and line.reason == reason.value
    assert line.stderr_tail == list(result.fault.stderr_tail)
    assert verify_record(rec).ok


@pytest.mark.parametrize("command", [("/no/such/bot",), (str(MISBEHAVING / "_base.py"),)],
                         ids=["missing", "not-executable"])
async def test_a_command_that_cannot_start_forfeits_with_spawn_failed_and_the_others_are_stopped(
    command, tmp_path, monkeypatch
):
    assert not os.access(MISBEHAVING / "_base.py", os.X_OK)
    with marked_processes(monkeypatch) as token:
        result = await play_with(BotSpec(name="nobot", command=command), 3, tmp_path)
        assert_no_survivors(token)
    assert_forfeit(result, 3, FaultReason.SPAWN_FAILED, tmp_path)
    assert "cannot start" in result.fault.message and result.fault.stderr_tail == ()


async def test_a_bot_that_stops_reading_its_stdin_is_named_not_reading(monkeypatch):
    with marked_processes(monkeypatch) as token:
        async with trio.open_nursery() as nursery:
            bot = BotProcess(0, misbehaving("stops_reading"), FAST, None)
            await bot.start(nursery)
            await bot.send(b'{"type":"hello"}\n', 1.0)
            assert b'"ready"' in await bot.receive_some()
            with pytest.raises(BotFault) as caught:
                await bot.send(b"x" * 65536 + b"\n", 0.3)  # more than its (shrunken) pipe holds
            assert caught.value.reason is FaultReason.NOT_READING
            await bot.aclose()
            nursery.cancel_scope.cancel()
        assert_no_survivors(token)


@pytest.mark.parametrize("mode", ["off", "required"])
async def test_bots_run_with_the_operators_limits_in_their_own_session_or_sandbox(tmp_path, mode):
    limits = Limits(handshake_s=2, memory_mb=300, cpu_s=7, max_open_files=40, sandbox=mode)
    result = await play_with(misbehaving("limits_probe"), 0, tmp_path, limits)
    assert result.fault.reason is FaultReason.EXITED  # it exits after printing
    seen = dict(line.split(" ", 1) for line in result.fault.stderr_tail)
    assert seen["RLIMIT_AS"] == f"{300 << 20} {300 << 20}"
    assert seen["RLIMIT_CPU"] == "7 8"  # soft < hard: SIGXCPU names the cap before SIGKILL
    assert seen["RLIMIT_NOFILE"] == "40 40"
    assert seen["RLIMIT_CORE"] == "0 0"
    assert len(seen["bot_id"]) > 10
    if mode == "off":
        assert seen["session"] == "True group True"
        assert result.sandbox == "off"
    else:  # nobody, in a pid namespace of its own under bwrap (pid 1)
        assert result.sandbox == "bwrap"
        assert seen["uid"] == "65534 65534" and int(seen["pid"]) == 1


async def test_a_child_in_the_group_and_a_setsid_grandchild_are_both_killed(tmp_path, monkeypatch):
    with marked_processes(monkeypatch) as token:
        result = await play_with(misbehaving("grandchild"), 1, tmp_path)
        announced = pids_in(result.fault.stderr_tail, result.sandbox)
        assert sum("pid" in line for line in result.fault.stderr_tail) >= 2, result.fault.stderr_tail
        assert_no_survivors(token, announced)
    assert_forfeit(result, 1, FaultReason.EXITED, tmp_path)
    # The exit was noticed although the survivors held its stdout open: not a timeout.
    assert result.fault.message == "exited with code 0"


async def test_a_fork_bomb_between_its_turns_ends_the_game_at_once(tmp_path, monkeypatch):
    # The honest seats get time to answer on a loaded machine (with FAST's 0.3 s, seat 0 once
    # timed out on request 1 while the bomb's processes took the cores): the bomb is caught by
    # the process cap, not by a clock, so the limit it runs under is not what is tested.
    limits = Limits(**{**FAST.to_json(), "decision_s": 10.0})
    with marked_processes(monkeypatch) as token, every_log_line() as logs:
        result = await play_with(misbehaving("fork_bomb", "--now"), 2, tmp_path, limits)
        assert_no_survivors(token)
    assert_forfeit(result, 2, FaultReason.PROCESS_LIMIT, tmp_path)
    assert "(cap 32)" in result.fault.message
    # At once: it forked before its first request, and its first answer is never taken (the
    # kernel's count of its processes is read with every piece of output).
    decisions = [e for e in read_record(tmp_path / "game.jsonl").entries if e.record == "decision"]
    assert not [e for e in decisions if e.seat == 2], decisions
    # The bot's log line says which game and seat it is about.
    (line,) = [e for e in logs if e["event"] == "bot_limit"]
    assert line["game"] == "back-alley" and line["seed"] == 9 and line["seat"] == 2 and line["bot"] == "fork_bomb"
    assert line["reason"] == "process_limit"


async def test_memory_spread_over_children_counts_against_the_bots_cap(tmp_path, monkeypatch):
    limits = Limits(**{**FAST.to_json(), "memory_mb": 256, "decision_s": 2.0})
    with marked_processes(monkeypatch) as token:
        result = await play_with(misbehaving("memory_hog", "--spread", "4"), 1, tmp_path, limits)
        assert_no_survivors(token)
    assert_forfeit(result, 1, FaultReason.MEMORY_LIMIT, tmp_path)
    assert "resident in" in result.fault.message and "(cap 256 MB)" in result.fault.message


async def test_the_referee_survives_a_bot_that_ignores_sigterm_within_its_teardown_budget(tmp_path, monkeypatch):
    limits = Limits(**{**FAST.to_json(), "grace_s": 0.3, "term_s": 0.3})
    with marked_processes(monkeypatch) as token:
        started = trio.current_time()
        result = await play_with(misbehaving("ignore_sigterm"), 0, tmp_path, limits)
        took = trio.current_time() - started
        assert_no_survivors(token, within_s=0.5)
    assert_forfeit(result, 0, FaultReason.TIMEOUT, tmp_path)
    assert took < 2 * limits.decision_s + limits.grace_s + limits.term_s + 2.0
