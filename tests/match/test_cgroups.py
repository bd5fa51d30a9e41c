"""A bot's cgroup: made with its caps, joined before the bot runs, named on an OOM kill.

Real cgroups and real processes; skipped (outside CI) where the machine has no
writable cgroup hierarchy, which docs/security.md says is then not used."""

from __future__ import annotations

import contextlib
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

    bots = [random_bot(1), random_bot(2), random_bot(3),
            BotSpec("hang", (sys.executable, str(MISBEHAVING / "hang.py")))]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch)
        result = await run_match("back-alley", {}, bots, seed=5, limits=Limits(sandbox="required", decision_s=0.5))
        nursery.cancel_scope.cancel()
    assert result.sandbox == "bwrap" and result.fault.reason.value == "timeout"
    assert len(seen) >= 4, seen  # one per bot process
    assert not present(), "cgroups left behind"


# -- a fair CPU share --------------------------------------------------------------------

# Every process spins on core 0 through one window of the monotonic clock (the same clock in
# every process: argv[-2], argv[-1]) and prints the CPU time it got in it. A bot of N such
# processes: each child leaves the session (as fork_bomb.py's do), which also gives it a
# scheduler autogroup of its own, and dies with its parent.
SPIN = ("import ctypes, os, sys, time\nos.sched_setaffinity(0, {0})\nrole = 'started'\n"
        "for _ in range(int(sys.argv[1]) - 1):\n"
        "    if os.fork() == 0:\n        os.setsid()\n        ctypes.CDLL(None).prctl(1, 9)\n"
        "        role = 'child'\n        break\n"
        "t0, t1 = float(sys.argv[-2]), float(sys.argv[-1])\nlate = time.monotonic() > t0\n"
        "time.sleep(max(0.0, t0 - time.monotonic()))\nc = time.process_time()\nwhile time.monotonic() < t1:\n    pass\n"
        "print(time.process_time() - c, role, late, flush=True)\n")
#: Lead time for every process to start (and the bot to fork) before the window opens, and its length.
LEAD_S, WINDOW_S = 3.0, 2.0


def cpu_share_next_to(busy: int, grouped: bool) -> float:
    """The share of core 0's CPU that one spinning process (an opponent deciding) gets in a window
    while a bot of ``busy`` spinning processes runs there too; with ``grouped`` each runs in a bot
    cgroup of its own (as sandboxed bots do).  A share of what the two together got in the same
    window, not a wall time: other work on the machine (other tests) takes from both alike."""
    groups = [cgroups.BotCgroup.create(cgroups.new_name(), None, 200) if grouped else None for _ in range(2)]
    hog_cg, work_cg = groups
    try:
        def prefix(g):
            return g.join_command() if g is not None else []

        t0 = time.monotonic() + LEAD_S
        window = [str(t0), str(t0 + WINDOW_S)]
        hog = subprocess.Popen([*prefix(hog_cg), sys.executable, "-c", SPIN, str(busy), *window],
                               stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            work = subprocess.run([*prefix(work_cg), sys.executable, "-c", SPIN, "1", *window],
                                  capture_output=True, text=True, timeout=120)
            hog_out, _ = hog.communicate(timeout=120)  # EOF once every one of its processes has printed
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(hog.pid, 9)
            hog.wait()
        assert work.returncode == 0, work.stderr
        lines = [line.split() for line in (work.stdout + hog_out).splitlines()]
        # Every process was there (started, or forked) before the window opened, and spun through it.
        assert len(lines) == busy + 1 and all(late == "False" for _, _, late in lines), lines
        mine, theirs = float(lines[0][0]), sum(float(cpu) for cpu, _, _ in lines[1:])
        return mine / (mine + theirs)
    finally:
        for g in groups:
            if g is not None:
                deadline = time.monotonic() + 10
                while not g.remove() and time.monotonic() < deadline:
                    g.kill_members()
                    time.sleep(0.01)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or cgroups.layout().cpu is None,  # type: ignore[union-attr]
                    reason="no cpu controller here")
@pytest.mark.slow
def test_a_bot_with_24_busy_processes_gets_the_share_of_a_bot_with_one():
    group = cgroups.BotCgroup.create(cgroups.new_name(), None, 10)
    assert group is not None and any(d.name.startswith(cgroups.CPU_PREFIX) for d in group.dirs)
    assert (next(d for d in group.dirs if d.name.startswith(cgroups.CPU_PREFIX)) / "cpu.shares").read_text() == "1024\n"
    group.remove()
    # In their own CPU groups, 24 busy processes leave the opponent what one does (half the
    # core they share)...
    one, many = cpu_share_next_to(1, True), cpu_share_next_to(24, True)
    assert many > one / 1.5, (one, many)
    # ...while as plain processes each one takes its share: the same test fails without the groups.
    plain_one, plain_many = cpu_share_next_to(1, False), cpu_share_next_to(24, False)
    assert plain_many < plain_one / 3, (plain_one, plain_many)
