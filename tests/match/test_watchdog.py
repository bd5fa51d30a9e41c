"""The watchdog's scan of a sandboxed bot reads the bot's own processes only:
its cost does not grow with unrelated processes on the machine, and it still
finds children, setsid grandchildren and fork bombs, with or without a cgroup."""

from __future__ import annotations

import subprocess
import sys

import pytest
import trio

from referee.match import bubblewrap, cgroups, sandbox
from referee.match.bot import BotProcess
from referee.match.runner import run_match
from referee.match.types import BotSpec, FaultReason, Limits

from .hostile import FAST, MISBEHAVING, assert_no_survivors, marked_processes, random_bot

pytestmark = pytest.mark.skipif(bubblewrap.probe() is not None, reason="needs a working bubblewrap sandbox")

SANDBOXED = Limits(**{**FAST.to_json(), "sandbox": "required"})


@pytest.fixture(params=["cgroup", "no-cgroup"])
def cgroup_mode(request, monkeypatch) -> str:
    if request.param == "cgroup" and cgroups.available() is not None:
        pytest.skip(f"no cgroups here: {cgroups.available()}")
    if request.param == "no-cgroup":  # as on a machine without delegated cgroups
        monkeypatch.setattr(cgroups.BotCgroup, "create", classmethod(lambda cls, *a: None))
    return request.param


def count_stat_reads(monkeypatch) -> list[int]:
    """Every pid whose /proc/PID/stat the sandbox module reads from now on."""
    reads: list[int] = []
    real = sandbox._read_stat

    def counting(pid: int):
        reads.append(pid)
        return real(pid)

    monkeypatch.setattr(sandbox, "_read_stat", counting)
    return reads


async def test_a_sandboxed_bots_scan_reads_only_its_own_processes(monkeypatch, cgroup_mode):
    bystanders: list[subprocess.Popen] = []
    with marked_processes(monkeypatch) as token:
        try:
            async with trio.open_nursery() as nursery:
                spec = BotSpec("grandchild", (sys.executable, str(MISBEHAVING / "grandchild.py")))
                bot = BotProcess(0, spec, SANDBOXED, None, bubblewrap.Jail(), log=None)
                await bot.start(nursery)
                assert bot.family is not None and bot.family.contained
                assert bool(bot.family.procs_files) == (cgroup_mode == "cgroup")
                await bot.send(b'{"type":"hello"}\n', 2.0)  # it starts its child and grandchild here
                with trio.fail_after(5):
                    while b"grandchild pid" not in "\n".join(bot.stderr_tail()).encode():
                        await trio.sleep(0.02)
                reads = count_stat_reads(monkeypatch)
                # What a scan of the settled family reads: a process of its start-up still on its way
                # out is read but is no member, and on a loaded machine one was (5 reads, then 4).
                alone = -1
                with trio.fail_after(10):
                    while True:
                        del reads[:]
                        before = bot.family.scan()
                        if len(reads) == alone:
                            break
                        alone = len(reads)
                        await trio.sleep(0.05)
                # bwrap outside, the bot (pid 1 inside), its child, and the setsid grandchild
                # (re-parented to the bot when its parent exited): all found from the bot down.
                assert len(before) == 4, before
                bystanders = [subprocess.Popen(["sleep", "60"]) for _ in range(100)]
                del reads[:]
                after = bot.family.scan()
                assert set(after) == set(before)
                assert len(reads) == alone  # nothing read for the 100 bystanders
                del reads[:]
                everyone = sandbox.scan_procs({})
                assert len(reads) >= 100 and all(p.pid in everyone for p in bystanders)  # the full scan does
                await bot.aclose()
                nursery.cancel_scope.cancel()
        finally:
            for p in bystanders:
                p.kill()
                p.wait()
        assert_no_survivors(token)


async def test_a_pid_seen_before_that_now_names_another_process_is_not_a_member():
    proc = subprocess.Popen(["sleep", "60"])
    unrelated = subprocess.Popen(["sleep", "60"])
    try:
        family = sandbox.Family(proc.pid, "no-such-bot", contained=True)
        assert set(family.scan()) == {proc.pid}
        start = sandbox._read_stat(unrelated.pid)[3]
        family._known[unrelated.pid] = start + 1  # as if a member had died and its pid were reused
        assert set(family.scan()) == {proc.pid}
        family._known[unrelated.pid] = start  # the same process: a member seen before stays one
        assert set(family.scan()) == {proc.pid, unrelated.pid}
    finally:
        for p in (proc, unrelated):
            p.kill()
            p.wait()


async def test_a_fork_bomb_in_the_sandbox_is_caught_and_swept_with_or_without_a_cgroup(
    tmp_path, monkeypatch, cgroup_mode
):
    # Without a cgroup the watchdog's count is the only cap; with one, the count still names it.
    limits = Limits(**{**SANDBOXED.to_json(), "decision_s": 3.0})
    bots = [random_bot(300 + s) for s in range(4)]
    bots[1] = BotSpec("fork_bomb", (sys.executable, str(MISBEHAVING / "fork_bomb.py"), "--now"))
    with marked_processes(monkeypatch) as token:
        result = await run_match("back-alley", {}, bots, seed=3, record_path=tmp_path / "g.jsonl", limits=limits)
        assert_no_survivors(token)
    assert result.sandbox == "bwrap"
    assert result.fault is not None and result.fault.seat == 1, result.fault
    assert result.fault.reason is FaultReason.PROCESS_LIMIT and "(cap 32)" in result.fault.message
