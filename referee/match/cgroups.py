"""A cgroup per sandboxed bot, where the machine lets the referee make one.

The kernel then caps the memory (page cache and the bot's tmpfs included) and
the tasks (threads included) of everything in the bot's sandbox, and says
when its OOM killer ended the bot.  The bot joins the cgroup before
``bwrap`` starts (``join_command``), so nothing it starts is outside.

Two layouts are used: cgroup v1 with writable ``memory`` and ``pids``
hierarchies under ``/sys/fs/cgroup``, or cgroup v2 with both controllers
delegated to a writable ``/sys/fs/cgroup``.  Anything else: ``available()``
says why not, and the watchdog (``sandbox``) is the only cap.

**A fair CPU share.**  Where the ``cpu`` controller is there too, each bot's
sandbox is also one CPU group of the default weight (v1 ``cpu.shares`` 1024,
v2 ``cpu.weight`` 100): the kernel shares a core between groups, not
processes, so a bot that runs 24 busy processes gets what its opponent with
one gets, not 24 times as much.  On v1 the groups are made at the top of the
``cpu`` hierarchy (``referee-<name>``), each weighing what one ordinary
process does there: under a common parent, every bot of the machine together
would weigh as one process against everything else.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PARENT = "referee"
TASKS_PER_PROCESS = 16  # the pids controller counts threads: a backstop above the process cap


CPU_PREFIX = "referee-"  # v1: the bots' CPU groups sit at the top of the cpu hierarchy, named so


@dataclass(frozen=True, slots=True)
class Layout:
    version: int
    memory: Path  # parent cgroup for the memory controller
    pids: Path  # parent cgroup for the pids controller (the same folder on v2)
    cpu: Path | None = None  # v1: where bots' CPU groups are made (None: no cpu controller); v2: memory's


@functools.cache
def layout() -> Layout | str:
    """Where to make bots' cgroups, or why there is nowhere (cached)."""
    try:
        if (ROOT / "memory" / "cgroup.procs").exists() and (ROOT / "pids" / "cgroup.procs").exists():
            mem, pids = ROOT / "memory" / PARENT, ROOT / "pids" / PARENT
            mem.mkdir(exist_ok=True)
            pids.mkdir(exist_ok=True)
            _sweep_stale({mem, pids})
            cpu = ROOT / "cpu"
            if not (os.access(cpu, os.W_OK) and (cpu / "cpu.shares").exists()):
                return Layout(1, mem, pids)
            _sweep_stale({cpu}, CPU_PREFIX)
            return Layout(1, mem, pids, cpu)
        controllers = (ROOT / "cgroup.controllers").read_text().split()
        if "memory" in controllers and "pids" in controllers:
            wanted = "+memory +pids" + (" +cpu" if "cpu" in controllers else "")
            (ROOT / "cgroup.subtree_control").write_text(wanted)
            parent = ROOT / PARENT
            parent.mkdir(exist_ok=True)
            (parent / "cgroup.subtree_control").write_text(wanted)
            _sweep_stale({parent})
            return Layout(2, parent, parent, parent if "cpu" in controllers else None)
        return "no cgroup hierarchy with the memory and pids controllers"
    except OSError as exc:
        return f"cgroups are not writable here ({exc.strerror or exc})"


def _sweep_stale(parents: set[Path], prefix: str = "") -> None:
    """Remove cgroups left by referees that were killed before removing them (named
    ``<prefix><referee pid>-...``, the pid gone); one in use cannot be removed anyway."""
    for parent in parents:
        try:
            children = [c for c in parent.iterdir() if c.is_dir() and c.name.startswith(prefix)]
        except OSError:
            continue
        for child in children:
            pid = child.name.removeprefix(prefix).split("-", 1)[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    os.rmdir(child)


def new_name() -> str:
    """A cgroup name unique to this referee process and bot."""
    return f"{os.getpid()}-{secrets.token_hex(6)}"


def available() -> str | None:
    """None when bots get cgroups, else why not."""
    found = layout()
    return found if isinstance(found, str) else None


class BotCgroup:
    """One bot's cgroup: made before the bot starts, removed after its teardown."""

    def __init__(self, lay: Layout, name: str, memory_bytes: int | None, max_tasks: int | None) -> None:
        self.layout = lay
        if lay.version == 2:
            self.dirs = [lay.memory / name]
        else:  # memory first, pids last (the watchdog reads its cgroup.procs); the CPU group between
            cpu = [lay.cpu / (CPU_PREFIX + name)] if lay.cpu is not None else []
            self.dirs = [lay.memory / name, *cpu, lay.pids / name]
        made: list[Path] = []
        try:
            for d in self.dirs:
                d.mkdir()
                made.append(d)
        except OSError:
            for d in made:
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise
        mem, pids = self.dirs[0], self.dirs[-1]
        if memory_bytes:
            (mem / ("memory.max" if lay.version == 2 else "memory.limit_in_bytes")).write_text(str(memory_bytes))
        if max_tasks:
            (pids / "pids.max").write_text(str(max_tasks))

    @classmethod
    def create(cls, name: str, memory_bytes: int | None, max_tasks: int | None) -> BotCgroup | None:
        lay = layout()
        if isinstance(lay, str):
            return None
        try:
            return cls(lay, name, memory_bytes, max_tasks)
        except OSError:
            return None

    def join_command(self) -> list[str]:
        """A prefix that puts the process in this cgroup, then execs the rest of the command."""
        procs = [str(d / "cgroup.procs") for d in self.dirs]
        script = ('for f in "$@"; do [ "$f" = -- ] && break; '
                  'echo $$ > "$f" || { echo "referee: cannot join cgroup $f" >&2; exit 125; }; shift; done; '
                  'shift; exec "$@"')
        return ["/bin/sh", "-c", script, "sh", *procs, "--"]

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer ended a process of this cgroup."""
        mem = self.dirs[0]
        name = "memory.events" if self.layout.version == 2 else "memory.oom_control"
        try:
            for line in (mem / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        except (OSError, ValueError):
            pass
        return False

    def kill_members(self) -> int:
        """SIGKILL every process still in this cgroup (after a bot's teardown: a straggler
        the family sweep had not reached yet); how many there were."""
        pids: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def remove(self) -> bool:
        """Remove the cgroup (empty once the sweep has run); False while the kernel
        still holds it (processes just killed may take a moment to leave)."""
        for d in self.dirs:
            try:
                os.rmdir(d)
            except FileNotFoundError:
                pass
            except OSError:
                return False
        return True
