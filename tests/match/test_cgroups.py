"""A bot's cgroup: made with its caps, joined before the bot runs, named on an OOM kill.

Real cgroups and real processes; skipped (outside CI) where the machine has no
writable cgroup hierarchy, which docs/security.md says is then not used."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from referee.match import cgroups

pytestmark = pytest.mark.skipif(cgroups.available() is not None and not os.environ.get("CI"),
                                reason=f"no writable cgroups here: {cgroups.available()}")


@pytest.fixture
def cgroup():
    group = cgroups.BotCgroup.create(cgroups.new_name(), 64 << 20, 40)
    assert group is not None, cgroups.available()
    yield group
    deadline = time.monotonic() + 10  # as BotProcess does: kill stragglers until the kernel lets go
    while not group.remove() and time.monotonic() < deadline:
        group.kill_members()
        time.sleep(0.01)
    assert not any(d.exists() for d in group.dirs), "the cgroup was not removed"


def test_the_join_prefix_puts_the_process_and_its_children_in_the_cgroup(cgroup):
    probe = "import os; print(open('/proc/self/cgroup').read()); print(os.getpid())"
    out = subprocess.run([*cgroup.join_command(), sys.executable, "-c", probe],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    name = cgroup.dirs[0].name
    assert f"/referee/{name}" in out.stdout  # memory (and pids) membership from its first instruction


def test_over_its_memory_cap_the_kernel_kills_it_and_the_cgroup_says_so(cgroup):
    hog = "x = []\nwhile True: x.append(bytearray(8 << 20))"
    done = subprocess.run([*cgroup.join_command(), sys.executable, "-c", hog], capture_output=True, timeout=60)
    assert done.returncode == -9, (done.returncode, done.stderr[-300:])
    assert cgroup.oom_killed()


def test_its_task_cap_stops_a_fork_bomb_at_the_kernel(cgroup):
    bomb = ("import os, sys\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
            "            import time; time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\n"
            "print(n); sys.stdout.flush(); os.killpg(0, 9)")
    done = subprocess.run([*cgroup.join_command(), sys.executable, "-c", bomb], capture_output=True, text=True,
                          timeout=60, start_new_session=True)
    forked = int(done.stdout.split()[0])
    assert forked < 40, forked  # pids.max = 40 tasks, the shell and python included


def test_a_fresh_cgroup_reports_no_oom(cgroup):
    assert not cgroup.oom_killed()


def test_a_cgroup_left_by_a_killed_referee_is_swept_and_a_live_ones_is_kept():
    lay = cgroups.layout()
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = [d / f"{dead.pid}-cafe" for d in {lay.memory, lay.pids}]
    live = [d / f"{os.getpid()}-beef" for d in {lay.memory, lay.pids}]
    for d in stale + live:
        d.mkdir()
    try:
        cgroups._sweep_stale({lay.memory, lay.pids})
        assert not any(d.exists() for d in stale)
        assert all(d.exists() for d in live)
    finally:
        for d in stale + live:
            if d.exists():
                d.rmdir()


async def test_a_sandboxed_game_gives_each_bot_a_cgroup_and_removes_them_all(tmp_path):
    import trio

    from referee.match.runner import run_match
    from referee.match.types import BotSpec, Limits

    from .hostile import MISBEHAVING, random_bot

    lay = cgroups.layout()
    mine = f"{os.getpid()}-"

    def present() -> set[str]:
        return {c.name for d in {lay.memory, lay.pids} for c in d.iterdir() if c.name.startswith(mine)}

    seen: set[str] = set()

    async def watch() -> None:
        while True:
            seen.update(present())
            await trio.sleep(0.02)

    bots = [random_bot(1), random_bot(2), random_bot(3), BotSpec("hang", (sys.executable, str(MISBEHAVING / "hang.py")))]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        result = await run_match("back-alley", {}, bots, seed=5, limits=Limits(sandbox="required", decision_s=0.5))
        nursery.cancel_scope.cancel()
    assert result.sandbox == "bwrap" and result.fault.reason.value == "timeout"
    assert len(seen) >= 4, seen  # one per bot process
    assert not present(), "cgroups left behind"
