"""Keep an untrusted bot and everything it starts on a leash, without privileges.

Three layers, each cheap:

* **At start** (``apply_limits``, just after the spawn): ``RLIMIT_AS`` (address space),
  ``RLIMIT_CPU`` (soft = cap, hard = cap + 1 s, so the kernel's SIGXCPU names
  the cause before its SIGKILL), ``RLIMIT_NOFILE`` and ``RLIMIT_CORE`` = 0.
  The bot starts in its own session (``start_new_session``), so its process
  group and session ids equal its pid, and with ``REFEREE_BOT_ID`` in its
  environment, a token unique to this bot process.
* **While it runs** (the watchdog in ``BotProcess``): every
  ``WATCH_INTERVAL_S`` a scan finds the bot's *family* and counts its live
  processes and their resident memory.  ``RLIMIT_NPROC`` is not used: it
  counts every process of the user (and threads), and root ignores it.
* **At teardown** (``sweep``): the family is killed with SIGKILL, scanned
  again and killed again until a scan finds nobody.

A *contained* family (a sandboxed bot: its own pid namespace, where orphans
are re-parented to the bot itself, and its cgroup where there is one) is
scanned on its own (``Family.scan``): the processes listed in the cgroup's
``cgroup.procs``, the root and the members seen before (same pid and start
time), and everything below them by ``/proc/PID/task/*/children``.  That
reads a few files per member, whatever else runs on the machine.

An uncontained family (``--sandbox off``) is found in one scan of all of
``/proc`` (``scan_procs``, shared by every bot of the referee process): every
live process that is, or descends (by parent pid) from, the bot; or is in the
bot's process group or session; or carries the bot's ``REFEREE_BOT_ID`` in its
environment; or was seen in the family before (same pid and start time).  What
escapes: a descendant that leaves the session, *and* replaces its environment,
*and* whose parent exits before the next scan.  Closing that gap needs a cgroup
(pids controller) or a pid namespace, which is what the sandbox gives; see
docs/misbehaving.md.

Linux only: without ``/proc`` the scans are empty and only the process group
is signalled.
"""

from __future__ import annotations

import contextlib
import os
import resource
import secrets
import shutil
import signal
from collections import defaultdict
from dataclasses import dataclass, field

import trio

from referee.match.types import Limits

BOT_ID_ENV = "REFEREE_BOT_ID"
WATCH_INTERVAL_S = 0.2  # watchdog period: the longest a fork bomb or memory hog runs unseen
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_ENV_KEY = BOT_ID_ENV.encode() + b"="


RUN_ID_ENV = "REFEREE_RUN_ID"  # set by whoever starts a referee to tag every bot it starts


def new_bot_id() -> str:
    """A token unique to one bot process: ``<run id>-<random>``, where the run id is
    ``REFEREE_RUN_ID`` when set (a tournament's workers inherit it) or this pid, so
    every bot of one run can be found by its prefix."""
    return f"{os.environ.get(RUN_ID_ENV) or os.getpid()}-{secrets.token_hex(8)}"


def _caps(limits: Limits) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) for each cap ``limits`` asks for."""
    caps: list[tuple[int, int, int]] = []
    if limits.memory_mb:
        cap = limits.memory_mb * 1024 * 1024
        caps.append((resource.RLIMIT_AS, cap, cap))
    if limits.cpu_s:
        caps.append((resource.RLIMIT_CPU, int(limits.cpu_s), int(limits.cpu_s) + 1))
    if limits.max_open_files:
        caps.append((resource.RLIMIT_NOFILE, int(limits.max_open_files), int(limits.max_open_files)))
    caps.append((resource.RLIMIT_CORE, 0, 0))
    return caps


_PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"  # util-linux
_PRLIMIT_FLAGS = {resource.RLIMIT_AS: "--as", resource.RLIMIT_CPU: "--cpu",
                  resource.RLIMIT_NOFILE: "--nofile", resource.RLIMIT_CORE: "--core"}


def prlimit_command(limits: Limits) -> list[str]:
    """``prlimit --as=S:H ... --``: a prefix that sets the caps, then execs the rest.

    Used for sandboxed bots, where the caps must be in place before ``bwrap``
    forks the bot (``apply_limits`` after the spawn would miss it)."""
    flags = []
    for which, soft, hard in _caps(limits):
        _, own_hard = resource.getrlimit(which)  # the child inherits ours: it cannot go above it
        if own_hard != resource.RLIM_INFINITY:
            hard = min(hard, own_hard)
            soft = min(soft, hard)
        flags.append(f"{_PRLIMIT_FLAGS[which]}={soft}:{hard}")
    return [_PRLIMIT, *flags, "--"]


def apply_limits(pid: int, limits: Limits) -> None:
    """Set the resource caps on a process that has just been started.

    Not a ``preexec_fn``: with one, ``subprocess`` must fork the whole
    referee instead of using vfork, which cost ~4.7 ms per bot against ~1 ms
    here (measured from a worker-sized process), and CPython documents
    ``preexec_fn`` as unsafe when the process has threads, which Trio starts
    Popen from.  ``resource.prlimit`` right after the spawn leaves the bot's first
    tens of microseconds uncapped; the watchdog's scans cover memory and
    process counts whatever happened in them.  A hard limit already below a
    cap is kept.  Linux only (``prlimit``), like the scans."""
    if not hasattr(resource, "prlimit"):
        return
    for which, soft, hard in _caps(limits):
        try:
            _, old_hard = resource.prlimit(pid, which)
            if old_hard != resource.RLIM_INFINITY:
                hard = min(hard, old_hard)
                soft = min(soft, hard)
            resource.prlimit(pid, which, (soft, hard))
        except (ValueError, OSError):  # gone already, or a cap the kernel refuses
            pass


# -- /proc scanning ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int  # clock ticks after boot: with pid, identifies a process
    state: str
    rss_bytes: int
    bot_id: str | None  # REFEREE_BOT_ID from its environment
    cpu_s: float = 0.0  # CPU time used so far (user + system)

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X", "x")


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read_stat(pid: int) -> tuple[int, int, int, int, str, int, int] | None:
    """(ppid, pgid, sid, start, state, rss pages, CPU ticks) or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    rest = data[data.rfind(b")") + 2:].split()
    try:
        return (int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19]), rest[0].decode(), int(rest[21]),
                int(rest[11]) + int(rest[12]))
    except (IndexError, ValueError):
        return None


def _read_bot_id(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
    except OSError:
        return None
    i = env.find(_ENV_KEY)
    while i > 0 and env[i - 1] != 0:  # must start an entry, not end another one's value
        i = env.find(_ENV_KEY, i + 1)
    if i < 0:
        return None
    j = env.find(b"\0", i)
    return env[i + len(_ENV_KEY): j if j >= 0 else len(env)].decode("ascii", "replace")


def scan_procs(bot_ids: dict[tuple[int, int], str | None]) -> dict[int, ProcInfo]:
    """Every process on the machine (sync; tens of µs per process).

    ``bot_ids`` caches each process's ``REFEREE_BOT_ID`` by (pid, start time),
    so a process's environment is read once; entries of gone processes are
    dropped."""
    out: dict[int, ProcInfo] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    me = os.getpid()
    seen: set[tuple[int, int]] = set()
    for name in names:
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me:
            continue
        stat = _read_stat(pid)
        if stat is None:
            continue
        ppid, pgid, sid, start, state, rss, ticks = stat
        key = (pid, start)
        seen.add(key)
        if key not in bot_ids:
            bot_ids[key] = _read_bot_id(pid)
        out[pid] = ProcInfo(pid, ppid, pgid, sid, start, state, rss * _PAGE, bot_ids[key], ticks / _TICKS)
    for key in [k for k in bot_ids if k not in seen]:
        del bot_ids[key]
    return out


@dataclass(slots=True)
class Snapshot:
    started: float  # trio.current_time() when the scan began
    procs: dict[int, ProcInfo]


@dataclass(slots=True)
class _Scanner:
    lock: trio.Lock = field(default_factory=trio.Lock)
    last: Snapshot | None = None
    bot_ids: dict[tuple[int, int], str | None] = field(default_factory=dict)


_SCANNER: trio.lowlevel.RunVar[_Scanner] = trio.lowlevel.RunVar("referee_scanner")


async def snapshot(not_before: float) -> Snapshot:
    """A scan that began at or after ``not_before``, shared by every bot of this run."""
    try:
        sc = _SCANNER.get()
    except LookupError:
        sc = _Scanner()
        _SCANNER.set(sc)
    async with sc.lock:
        if sc.last is not None and sc.last.started >= not_before:
            return sc.last
        started = trio.current_time()
        procs = await trio.to_thread.run_sync(scan_procs, sc.bot_ids)
        sc.last = Snapshot(started, procs)
        return sc.last


async def family_members(family: Family, max_age: float = 0.0) -> dict[int, ProcInfo]:
    """The family's live processes: a contained family's own scan, else from a
    machine-wide scan at most ``max_age`` old (shared by every bot of this run)."""
    if family.contained:
        # On the event loop: a few small /proc and cgroup reads of this bot's own processes,
        # cheaper than a thread hop. (It ran in a worker thread only to keep Trio's threads
        # alive for bwrap's --die-with-parent; bots now start from this thread: bot._Child.)
        return family.scan()
    return family.members(await snapshot(not_before=trio.current_time() - max_age))


# -- a bot's family -----------------------------------------------------------------


def _children(pid: int) -> list[int]:
    """The pids of ``pid``'s children (of all its threads); empty if it is gone."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return out


def _read_pids(path: str) -> list[int]:
    """The pids a cgroup's ``cgroup.procs`` lists (empty if it cannot be read)."""
    try:
        with open(path, "rb") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


class Family:
    """The processes that belong to one bot (see the module docstring).

    ``contained``: the bot runs in a pid namespace of its own (the sandbox), so
    its family is found from the bot down, never from all of ``/proc``;
    ``procs_files``: its cgroup's ``cgroup.procs`` files, whose processes are
    members whatever their parents."""

    def __init__(self, root: int, bot_id: str, *, contained: bool = False,
                 procs_files: tuple[str, ...] = ()) -> None:
        self.root = root
        self.bot_id = bot_id
        self.contained = contained
        self.procs_files = procs_files
        stat = _read_stat(root)
        self.root_start = stat[3] if stat is not None else None
        self._known: dict[int, int] = {}  # pid -> start time, of members seen so far
        self.peak_processes = 0

    def scan(self) -> dict[int, ProcInfo]:
        """A contained family as it is now, from its own processes only (sync;
        a few files read per member, nothing per other process on the machine)."""
        known = self._known
        trusted: set[int] = set()  # listed by the kernel as ours: no start-time check
        for path in self.procs_files:
            trusted.update(_read_pids(path))
        checked = {pid: start for pid, start in known.items()}  # seen before: same process only
        if self.root_start is not None:
            checked.setdefault(self.root, self.root_start)
        fam: dict[int, ProcInfo] = {}
        visited: set[int] = set()
        stack = [(pid, True) for pid in trusted] + [(pid, False) for pid in checked]
        while stack:
            pid, sure = stack.pop()
            if pid in visited:
                continue
            stat = _read_stat(pid)
            if stat is None:
                continue
            ppid, pgid, sid, start, state, rss, ticks = stat
            if not sure and checked[pid] != start:
                continue  # the pid names another process now (a child may still reach it)
            visited.add(pid)
            info = ProcInfo(pid, ppid, pgid, sid, start, state, rss * _PAGE, None, ticks / _TICKS)
            if info.alive:
                fam[pid] = info
            stack.extend((child, True) for child in _children(pid))  # a member's child is a member
        known.clear()
        known.update((pid, p.start) for pid, p in fam.items())
        self.peak_processes = max(self.peak_processes, len(fam))
        return fam

    def scan_now(self) -> dict[int, ProcInfo]:
        """The family as it is now, by whichever scan fits it (sync)."""
        if self.contained:
            return self.scan()
        return self.members(Snapshot(0.0, scan_procs({})))

    def members(self, snap: Snapshot) -> dict[int, ProcInfo]:
        procs = snap.procs
        bot_id, known = self.bot_id, self._known
        root = self.root
        holder = procs.get(root)
        if holder is not None and self.root_start is not None and holder.start != self.root_start:
            root = -1  # the bot is gone and its pid names another process now: match by token only
        fam = {
            p.pid: p for p in procs.values()
            if p.alive and (p.pid == root or p.pgid == root or p.sid == root or p.bot_id == bot_id
                            or known.get(p.pid) == p.start)
        }
        children: dict[int, list[ProcInfo]] = defaultdict(list)
        for p in procs.values():
            if p.alive:
                children[p.ppid].append(p)
        stack = list(fam)
        while stack:
            for c in children.get(stack.pop(), ()):
                if c.pid not in fam:
                    fam[c.pid] = c
                    stack.append(c.pid)
        known.clear()
        known.update((pid, p.start) for pid, p in fam.items())
        self.peak_processes = max(self.peak_processes, len(fam))
        return fam


def kill_members(members: dict[int, ProcInfo]) -> None:
    """SIGKILL each member (and each group one of them leads), if it is still the same process."""
    for p in members.values():
        stat = _read_stat(p.pid)
        if stat is None or stat[3] != p.start:
            continue  # gone, or the pid now names another process
        try:
            if p.pgid == p.pid:
                os.killpg(p.pid, signal.SIGKILL)
            os.kill(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def signal_group(family: Family, sig: int) -> None:
    """Signal the bot's process group, unless its id has been reused by another process."""
    stat = _read_stat(family.root)
    if stat is not None and family.root_start is not None and stat[3] != family.root_start:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(family.root, sig)


async def sweep(family: Family, rounds: int = 50) -> int:
    """Kill the whole family until a fresh scan finds nobody; return how many rounds it took.

    Kills are re-sent each round: processes forking as fast as they can may
    add members between a scan and the kills."""
    signal_group(family, signal.SIGKILL)
    for i in range(rounds):
        members = await family_members(family)
        if not members:
            return i
        await trio.to_thread.run_sync(kill_members, members)
        await trio.sleep(0.005 * (i + 1))
    return rounds
