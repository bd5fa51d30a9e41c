"""No shared kernel object between two bots (#28): table talk through locks, leases and watches.

``sample_bots/misbehaving/table_talk.py`` marks the cards it holds in its
seat's slot of files every sandbox can read (the interpreter's standard
library) and probes the other seats' slots.  Two of them sit as partners in a
real Back Alley game (real subprocesses, real bwrap); each says on stderr what
it holds (``HOLD``) and what it learnt (``SEEN``).

* Unsandboxed, and in the sandbox as it was before #28 (the same host inodes
  bound into every sandbox, no seccomp filter), each learns its partner's whole
  hand: the channel works, so these tests can fail.
* In today's sandbox nothing crosses: the private view gives each process
  inodes of its own (locks still work inside, and carry nothing), the seccomp
  filter refuses leases and watches; either wall alone holds as well.
* Across the seatings of one duplicate deal (the same entrant on both sides of
  the table in two games at once) the same channel told a bot its opponents'
  hands; the sandbox closes it, and the dispatcher never runs the two seatings
  at once anyway (tests/tournaments/test_dispatch.py).
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from referee.match import bubblewrap
from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits

from .conftest import one_at_a_time

ROOT = Path(__file__).resolve().parents[1]
TALK = ROOT / "sample_bots" / "misbehaving" / "table_talk.py"
RANDOM = ROOT / "sample_bots" / "random_bot.py"
SEED = 7
CHANNELS = ("flock", "posix", "ofd", "lease", "inotify", "fanotify")
LOCKS = ("flock", "posix", "ofd")

pytestmark = pytest.mark.skipif(bubblewrap.probe() is not None and not os.environ.get("CI"),
                                reason="needs bubblewrap")


@pytest.fixture(autouse=True)
def _alone():
    """The channel is machine-wide by nature (marks on files every process can read): two of
    these games at once (pytest-xdist workers) would talk across, so they run one at a time."""
    with one_at_a_time("table-talk"):
        yield


def talk(channel: str, probes: int = 4) -> BotSpec:
    return BotSpec(name="talk", command=(sys.executable, str(TALK), "--channel", channel, "--probes", str(probes)))


def rand(seed: int) -> BotSpec:
    return BotSpec(name="random", command=(sys.executable, str(RANDOM), str(seed)))


def said(stderr_dir: Path, seat: int) -> dict[str, object]:
    """What the bot in ``seat`` said: its hand, what it learnt of each seat, what was refused."""
    out: dict[str, object] = {"hold": None, "seen": {}, "refused": None}
    log = next(stderr_dir.glob(f"seat{seat}-*.log"))
    for line in log.read_text().splitlines():
        if not line.startswith("table_talk: "):
            continue
        kind, _, rest = line.removeprefix("table_talk: ").partition(" ")
        if kind == "HOLD":
            out["hold"] = set(rest.split(" ", 1)[1].split(","))
        elif kind == "SEEN":
            other, cards = rest.split(" ", 1)
            out["seen"][int(other)] = set(cards.split(","))  # type: ignore[index]
        elif kind == "CHANNEL":
            out["refused"] = rest
    return out


def use_sandbox(monkeypatch, mode: str) -> Limits:
    """Limits for ``mode``; 'before' is the sandbox as it was before #28 (no view, no filter)."""
    if mode == "unsandboxed":
        return Limits(sandbox="off")
    if mode in ("view only", "sandboxed") and (why := bubblewrap.view_problem()) is not None:
        pytest.skip(f"no private view here: {why}")
    if mode in ("before", "filter only"):
        monkeypatch.setattr(bubblewrap, "view_problem", lambda: f"{mode}: no private view")
    if mode in ("before", "view only"):
        monkeypatch.setattr(bubblewrap, "seccomp_problem", lambda: f"{mode}: no seccomp filter")
        return Limits(sandbox="auto")  # auto runs on without the filter (with one warning line)
    return Limits(sandbox="required")


async def partners(channel: str, limits: Limits, stderr_dir: Path) -> tuple[dict, dict]:
    """Two table talkers as partners (seats 0 and 2) against random bots: what each said."""
    result = await run_match("back-alley", {}, [talk(channel), rand(1), talk(channel), rand(3)], seed=SEED,
                             limits=limits, stderr_dir=stderr_dir)
    assert result.fault is None, result.fault  # they play legally throughout
    return said(stderr_dir, 0), said(stderr_dir, 2)


def fanotify_reachable() -> bool:
    return os.geteuid() == 0  # fanotify_init needs CAP_SYS_ADMIN


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("mode", ["unsandboxed", "before"])
async def test_without_todays_sandbox_partners_learn_each_others_hands(channel, mode, tmp_path, monkeypatch):
    if channel == "fanotify" and not fanotify_reachable():
        pytest.skip("fanotify needs root")
    limits = use_sandbox(monkeypatch, mode)
    a, b = await partners(channel, limits, tmp_path)
    assert a["hold"] and b["hold"]
    if channel == "fanotify" and mode == "before":
        # Not reachable in a sandbox even before #28 (no CAP_SYS_ADMIN there): refused, nothing learnt.
        assert a["refused"] and not a["seen"]
        return
    assert a["refused"] is None and b["refused"] is None
    assert a["seen"].get(2) == b["hold"], "seat 0 did not learn its partner's hand"
    assert b["seen"].get(0) == a["hold"], "seat 2 did not learn its partner's hand"


@pytest.mark.parametrize("channel", CHANNELS)
async def test_in_the_sandbox_no_channel_carries_a_card(channel, tmp_path, monkeypatch):
    limits = use_sandbox(monkeypatch, "sandboxed")
    a, b = await partners(channel, limits, tmp_path)
    assert a["hold"] and b["hold"]  # each marked its hand...
    assert a["seen"] == {} and b["seen"] == {}, (a["seen"], b["seen"])  # ...and nobody learnt a card
    if channel in LOCKS:
        # Locks still work inside (a bot's SQLite book keeps working); they are its own.
        assert a["refused"] is None and b["refused"] is None
    else:
        assert "Operation not permitted" in str(a["refused"])  # the filter: EPERM, not a kill


@pytest.mark.parametrize("channel", ["flock", "ofd", "inotify", "lease"])
@pytest.mark.parametrize("wall", ["view only", "filter only"])
async def test_either_wall_alone_holds(channel, wall, tmp_path, monkeypatch):
    """The private view without the filter, and the filter without the view (a referee that
    is not root), each close the channel by themselves."""
    limits = use_sandbox(monkeypatch, wall)
    a, b = await partners(channel, limits, tmp_path)
    assert a["hold"] and b["hold"]
    assert a["seen"] == {} and b["seen"] == {}, (a["seen"], b["seen"])
    if wall == "filter only":  # without a view, the filter refuses locks too
        assert "Operation not permitted" in str(a["refused"])


@pytest.mark.parametrize("mode", ["unsandboxed", "sandboxed"])
async def test_across_the_seatings_of_a_duplicate_deal(mode, tmp_path, monkeypatch):
    """One entrant's processes in both seatings of one deal, played at the same time: in the
    second seating the entrant holds the cards its opponents hold in the first.  One talker
    probes (seat 0 of the first seating), on its first 60 requests rather than 4: the two games
    start together, but on a loaded machine the second seating's bots can say ready after the
    first seating's talker made its fourth request (seen once in a full parallel run: nothing
    to learn yet).  The others only mark their hands: a probe takes an exclusive lock for a
    moment, which a second prober would read as a card held."""
    limits = use_sandbox(monkeypatch, mode)
    first, second = tmp_path / "first", tmp_path / "second"
    prober, marker = talk("flock", probes=60), talk("flock", probes=0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_match("back-alley", {}, [prober, rand(1), marker, rand(3)],
                                             seed=SEED, limits=limits, stderr_dir=first))
        nursery.start_soon(lambda: run_match("back-alley", {}, [rand(0), marker, rand(2), marker],
                                             seed=SEED, limits=limits, stderr_dir=second))
    a0, a2 = said(first, 0), said(first, 2)
    b1, b3 = said(second, 1), said(second, 3)
    assert all(x["hold"] for x in (a0, a2, b1, b3))
    opponents_learnt = a0["seen"].get(1) == b1["hold"] and a0["seen"].get(3) == b3["hold"]
    if mode == "unsandboxed":
        assert opponents_learnt, "the first seating did not learn its opponents' hands from the second"
    else:
        assert not opponents_learnt
        assert a0["seen"] == {}


# -- the filter itself ---------------------------------------------------------------------

SYSCALLS = r"""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
nr = {"ptrace": 101, "bpf": 321, "userfaultfd": 323, "perf_event_open": 298, "keyctl": 250,
      "mount": 165, "unshare": 272, "setns": 308, "fanotify_init": 300, "inotify_init1": 294,
      "clone3": 435, "clone": 56, "mincore": 27, "madvise": 28}
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr[name], *[ctypes.c_long(a) for a in args])
    return "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
out = {
    "ptrace": call("ptrace", 16, 1, 0, 0),                 # PTRACE_ATTACH to pid 1
    "bpf": call("bpf", 0, 0, 0),
    "userfaultfd": call("userfaultfd", 0),
    "perf_event_open": call("perf_event_open", 0, 0, -1, -1, 0),
    "keyctl": call("keyctl", 0, -3, 0),                    # KEYCTL_GET_KEYRING_ID of the session keyring
    "mount": call("mount", 0, 0, 0, 0, 0),
    "unshare": call("unshare", 0x20000),                   # CLONE_NEWNS
    "setns": call("setns", -1, 0),
    "fanotify_init": call("fanotify_init", 0, 0),
    "inotify_init1": call("inotify_init1", 0),
    "clone3": call("clone3", 0, 0),
    "clone_newnet": call("clone", 0x40000000 | 17, 0, 0, 0, 0),  # CLONE_NEWNET | SIGCHLD
    "mincore": call("mincore", 0, 4096, 0),
    "madvise_pageout": call("madvise", 0, 4096, 21),       # MADV_PAGEOUT
}
import fcntl
fd = os.open("/", os.O_RDONLY)
try:
    fcntl.fcntl(fd, 1026, 0x80000001)                      # F_NOTIFY (dnotify), DN_ACCESS | DN_MULTISHOT
    out["f_notify"] = "ok"
except OSError as exc:
    out["f_notify"] = errno.errorcode[exc.errno]
try:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    out["fadvise_dontneed"] = "ok"
except OSError as exc:
    out["fadvise_dontneed"] = errno.errorcode[exc.errno]
print(json.dumps(out))
"""
REFUSED = ("ptrace", "bpf", "userfaultfd", "perf_event_open", "keyctl", "mount", "unshare", "setns",
           "fanotify_init", "inotify_init1", "clone_newnet", "f_notify", "mincore", "madvise_pageout",
           "fadvise_dontneed")


def run_inside(jail: bubblewrap.Jail, tmp_path: Path) -> dict[str, str]:
    import json

    done = subprocess.run(jail.command([sys.executable, "-c", SYSCALLS], str(tmp_path)), cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(bubblewrap.seccomp_problem() is not None, reason="no libseccomp here")
@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8 or os.uname().machine != "x86_64",
                    reason="system call numbers of x86_64")
def test_the_filter_refuses_what_no_bot_needs_with_eperm_not_a_kill(tmp_path):
    inside = run_inside(bubblewrap.Jail(view=False, seccomp=True), tmp_path)
    assert {k: inside[k] for k in REFUSED} == dict.fromkeys(REFUSED, "EPERM")
    assert inside["clone3"] == "ENOSYS"  # so libc falls back to clone, whose flags the filter sees
    # Without the filter the same sandbox lets several through: it is the filter that refuses.
    before = run_inside(bubblewrap.Jail(view=False, seccomp=False), tmp_path)
    assert before["keyctl"] == "ok" and before["inotify_init1"] == "ok" and before["f_notify"] == "ok"
    assert before["fadvise_dontneed"] != "EPERM" and before["mincore"] != "EPERM"
    assert before["clone3"] != "ENOSYS"


def test_required_refuses_in_one_line_and_auto_warns_without_libseccomp(monkeypatch, capsys):
    if bubblewrap.probe() is not None:
        pytest.skip("bubblewrap does not work here")
    monkeypatch.setattr(bubblewrap, "seccomp_problem", lambda: "libseccomp does not work (OSError: not found)")
    with pytest.raises(bubblewrap.SandboxUnavailable) as caught:
        bubblewrap.effective_mode("required")
    assert "\n" not in str(caught.value) and "seccomp filter" in str(caught.value)
    bubblewrap._warn_once.cache_clear()
    assert bubblewrap.effective_mode("auto") == "bwrap"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "without their seccomp filter" in err
    assert "--seccomp" not in bubblewrap.Jail().command([sys.executable, "-c", "0"], str(ROOT))
