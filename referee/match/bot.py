"""One bot subprocess, driven with Trio: the real ``BotChannel``.

Only the functions that wait are async.  The process hands the runner raw
bytes (framing and the protocol are ``protocol.machine``'s); every failure
of the process is raised or returned as ``BotFault`` with a ``FaultReason``,
and the match runner is the one place that turns those into results.

Processes start in their own session (and so their own process group) with
resource limits applied before ``exec`` and a watchdog over the bot's whole
process family (``sandbox``); ``aclose`` shuts the family down on a bounded,
shielded schedule: close stdin → grace → SIGTERM → SIGKILL → sweep.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import select
import signal
import subprocess
from pathlib import Path
from typing import Any

import trio

from referee.logging import structlog
from referee.match import cgroups, sandbox
from referee.match.bubblewrap import CannotSandbox, Jail
from referee.match.channel import BotChannel, BotFault, describe_exit
from referee.match.types import BotSpec, FaultReason, Limits

STDERR_TAIL_LINES = 20
_READ_CHUNK = 65536
# Past Limits.stderr_keep_bytes, stderr is still read (so the last lines are known) but
# dropped, and no faster than this: a bot that writes faster blocks on its own stderr
# instead of costing the referee a core.
STDERR_DRAIN_BYTES_PER_S = 4 << 20
JAIL_PROCESSES = 1  # bwrap outside the sandbox (the bot is pid 1 inside): not one of the bot's own
EXIT_DRAIN_S = 0.1  # after the bot exits, how long its stdout may still deliver (children may hold it open)

__all__ = ["BotFault", "BotProcess", "describe_exit"]

_log = structlog.get_logger("referee.bot")


class _Child:
    """A bot process started from the Trio thread itself, with Trio streams for its pipes.

    Not ``trio.lowlevel.open_process``: that calls ``Popen`` in a worker thread,
    and ``bwrap --die-with-parent`` (PR_SET_PDEATHSIG) kills the bot as soon as
    *that thread* exits, which Trio's thread cache does after 10 s idle, so a
    sandboxed long-lived bot would die mid-tournament.  Started from the main
    thread, the bot dies with the referee process, as meant.  (``Popen`` uses
    vfork here: the event loop waits about a millisecond.)"""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin, self.stdout, self.stderr = (
            trio.lowlevel.FdStream(os.dup(f.fileno())) if f is not None else None
            for f in (popen.stdin, popen.stdout, popen.stderr)
        )
        for f in (popen.stdin, popen.stdout, popen.stderr):
            if f is not None:
                f.close()
        self._pidfd = os.pidfd_open(popen.pid)
        self._wait_lock = trio.Lock()

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        async with self._wait_lock:  # one waiter on the pidfd at a time
            while self._popen.poll() is None:
                await trio.lowlevel.wait_readable(self._pidfd)
            if self._pidfd >= 0:
                os.close(self._pidfd)
                self._pidfd = -1
        return self._popen.returncode


class BotProcess(BotChannel):
    """A running bot: write bytes to its stdin, read bytes from its stdout.

    ``log``: the runner's logger (bound to the game); it is bound to the seat and bot here."""

    def __init__(self, seat: int, spec: BotSpec, limits: Limits, stderr_path: Path | None,
                 jail: Jail | None = None, log: Any = None) -> None:
        self.seat = seat
        self.log = (_log if log is None else log).bind(seat=seat, bot=spec.name)
        self.jail = jail  # None: run unsandboxed (``--sandbox off``, or bubblewrap missing)
        self.cgroup: cgroups.BotCgroup | None = None
        self.spec = spec
        self.limits = limits
        self.stderr_path = stderr_path
        self.process: _Child | None = None
        self._early = bytearray()  # stdout the watchdog took from the pipe before closing it
        self._stdout_eof = False
        self._stdout_poll: select.poll | None = None  # a zero-timeout readiness check of stdout
        self._stderr_tail: collections.deque[bytes] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_partial = b""
        self._stderr_kept = 0
        self._stderr_dropped = 0
        self._stderr_done = trio.Event()
        self.pid: int | None = None
        self.bot_id = sandbox.new_bot_id()  # REFEREE_BOT_ID of the process and its descendants
        self.family: sandbox.Family | None = None
        self.limit_fault: BotFault | None = None  # set by the watchdog when it killed the bot
        self._gone = False  # the process has exited and its stdout had time to drain
        self._tasks_fd = -1  # its cgroup's pids.current, where it has one
        self._tasks_allowed = 0

    # -- start ---------------------------------------------------------------

    async def start(self, nursery: trio.Nursery) -> None:
        """Start the process; the stderr pump and the watchdog run in ``nursery``."""
        argv, env = self._command()
        try:
            self.process = _Child(subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.spec.cwd,
                env=env,
                start_new_session=True,
            ))
        except (OSError, subprocess.SubprocessError) as exc:
            self._stderr_done.set()
            await self._remove_cgroup_when_empty()
            raise BotFault(FaultReason.SPAWN_FAILED, f"cannot start {self.spec.command[0]!r}: {exc}") from None
        self.pid = self.process.pid
        if self.jail is None:
            sandbox.apply_limits(self.pid, self.limits)
        self._stdout_poll = select.poll()
        self._stdout_poll.register(self.process.stdout.fileno(), select.POLLIN)  # type: ignore[union-attr]
        procs_files = (str(self.cgroup.dirs[-1] / "cgroup.procs"),) if self.cgroup is not None else ()
        if self.cgroup is not None and self.limits.max_processes:
            # The process cap is checked on every piece of output, from the kernel's own count:
            # a scan every WATCH_INTERVAL_S alone notices a fork bomb late on a loaded machine, after
            # the bot has answered (and had its answers taken) with hundreds of processes running.
            with contextlib.suppress(OSError):
                self._tasks_fd = os.open(self.cgroup.dirs[-1] / "pids.current", os.O_RDONLY | os.O_CLOEXEC)
                self._tasks_allowed = self.limits.max_processes + JAIL_PROCESSES
        self.family = sandbox.Family(self.pid, self.bot_id, contained=self.jail is not None, procs_files=procs_files)
        nursery.start_soon(self._pump_stderr)
        nursery.start_soon(self._watch)

    @property
    def started(self) -> bool:
        return self.process is not None

    def _command(self) -> tuple[list[str], dict[str, str]]:
        """The argv and environment to spawn: the bot's own command, or, sandboxed, the
        bot inside ``bwrap`` with its rlimits set first (``prlimit``, inherited by
        everything in the sandbox) and, where possible, in a cgroup of its own."""
        env = {**os.environ, sandbox.BOT_ID_ENV: self.bot_id}
        if self.jail is None:
            return list(self.spec.command), env
        try:
            inner = self.jail.command(self.spec.command, self.spec.cwd, env)
        except CannotSandbox as exc:
            self._stderr_done.set()
            raise BotFault(FaultReason.SPAWN_FAILED, f"cannot start in the sandbox: {exc}") from None
        limits = self.limits
        memory = None
        if limits.memory_mb:  # the cgroup also counts page cache and the bot's two tmpfs folders
            memory = (limits.memory_mb + 2 * self.jail.scratch_mb + 64) << 20
        tasks = limits.max_processes * cgroups.TASKS_PER_PROCESS if limits.max_processes else None
        self.cgroup = cgroups.BotCgroup.create(cgroups.new_name(), memory, tasks)
        prefix = self.cgroup.join_command() if self.cgroup is not None else []
        # The wrappers and bwrap get a bare environment: nothing of the referee's to leak.
        bare = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), sandbox.BOT_ID_ENV: self.bot_id}
        return [*prefix, *sandbox.prlimit_command(limits), *inner], bare

    async def _remove_cgroup_when_empty(self, timeout: float = 10.0) -> None:
        """Remove the cgroup once its killed processes have left it (bounded;
        a leftover is swept by the next referee, cgroups._sweep_stale)."""
        if self.cgroup is None:
            return
        with trio.move_on_after(timeout):
            while not self.cgroup.remove():
                self.cgroup.kill_members()  # a straggler the sweep missed (a fork bomb's last children)
                await trio.sleep(0.01)

    @property
    def returncode(self) -> int | None:
        """The bot's exit status, negative for a signal (bwrap reports a signal N as 128 + N)."""
        code = self.process.returncode if self.process is not None else None
        if self.jail is not None and code is not None and 128 < code < 128 + 65:
            return -(code - 128)
        return code

    # -- watchdog --------------------------------------------------------------

    async def _watch(self) -> None:
        """Notice the bot's exit at once; every WATCH_INTERVAL_S, police its family's size and memory."""
        proc = self.process
        assert proc is not None
        while proc.returncode is None:
            with trio.move_on_after(sandbox.WATCH_INTERVAL_S):
                await proc.wait()
            if proc.returncode is not None or self.limit_fault is not None:
                break
            await self.enforce_limits(max_age=sandbox.WATCH_INTERVAL_S / 2)
        # The process has exited: give its last output a moment to arrive, take what is
        # in the pipe, then close our end, which ends a read that waits on a stdout its
        # children still hold open (the reader sees end-of-file).
        with trio.move_on_after(5):
            await proc.wait()
        await trio.sleep(EXIT_DRAIN_S)
        self._gone = True
        for _ in range(16):  # at most 1 MB: a child may keep writing
            data = self._read_nowait()
            if not data:
                break
            self._early += data
        if proc.stdout is not None and not self._stdout_eof:
            await proc.stdout.aclose()
        self._stdout_eof = True

    async def _pump_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        sink = None
        sink_path = self.stderr_path
        try:
            if sink_path is not None:
                sink = open(sink_path, "wb")  # noqa: SIM115 (closed in the finally below)
            while True:
                try:
                    data = await self.process.stderr.receive_some(_READ_CHUNK)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    break
                if not data:
                    break
                if self.stderr_path != sink_path:
                    self._close_sink(sink)  # a long-lived bot's next game: its stderr goes to that game's file
                    sink_path = self.stderr_path
                    sink = open(sink_path, "wb") if sink_path is not None else None  # noqa: SIM115 (closed below)
                if not self._keep_stderr(data, sink):
                    await trio.sleep(len(data) / STDERR_DRAIN_BYTES_PER_S)
        finally:
            # Cancelled (the game was stopped from outside, as ``referee ask`` stops it once it has
            # its reply): what the bot wrote before that still goes to its file.
            with contextlib.suppress(OSError, ValueError):
                fd = self.process.stderr.fileno()  # trio's FdStream
                for _ in range(16):  # at most 1 MB: a child may keep writing
                    data = os.read(fd, _READ_CHUNK)  # non-blocking: BlockingIOError once empty
                    if not data:
                        break
                    self._keep_stderr(data, sink)
            self._close_sink(sink)
            self._stderr_done.set()

    def _keep_stderr(self, data: bytes, sink: Any) -> bool:
        """Remember ``data`` for the fault's tail and write it to the file while there is
        room; False once over the cap (the bytes are counted as dropped)."""
        self._remember_stderr(bytes(data))
        room = self.limits.stderr_keep_bytes - self._stderr_kept
        if room > 0 and sink is not None:
            piece = data[:room]
            sink.write(piece)
            sink.flush()
            self._stderr_kept += len(piece)
            self._stderr_dropped += len(data) - len(piece)
            return True
        self._stderr_dropped += len(data)
        return False

    def _close_sink(self, sink: Any) -> None:
        if sink is not None:
            if self._stderr_dropped:
                sink.write(f"\n[referee: {self._stderr_dropped} more bytes of stderr dropped]\n".encode())
            sink.close()
        self._stderr_kept = self._stderr_dropped = 0

    def next_game(self, seat: int, stderr_path: Path | None, log: Any) -> None:
        """A long-lived bot starts another game: log it under its new seat, send its
        stderr to that game's file (from the next bytes it writes) and forget the
        last game's stderr lines (a fault quotes only this game's)."""
        self.seat = seat
        self.log = log.bind(seat=seat, bot=self.spec.name)
        self.stderr_path = stderr_path
        self._stderr_tail.clear()
        self._stderr_partial = b""

    @property
    def alive(self) -> bool:
        """Running, under its caps, and its stdout open: fit to be given another game."""
        return (self.process is not None and self.process.returncode is None and self.limit_fault is None
                and not self._stdout_eof and not self._early)

    def kill(self) -> None:
        """SIGKILL the bot's family now (``aclose`` still reaps it and sweeps what is left)."""
        self._signal_group(signal.SIGKILL)

    def _remember_stderr(self, data: bytes) -> None:
        text = self._stderr_partial + data
        parts = text.split(b"\n")
        self._stderr_partial = parts.pop()[-400:]
        for part in parts[-STDERR_TAIL_LINES:]:
            self._stderr_tail.append(part[-400:])

    def stderr_tail(self) -> tuple[str, ...]:
        lines = list(self._stderr_tail)
        if self._stderr_partial:
            lines.append(self._stderr_partial)
        return tuple(line.decode("utf-8", "replace") for line in lines[-STDERR_TAIL_LINES:])

    async def wait_stderr_drained(self, timeout: float = 0.3) -> None:
        with trio.move_on_after(timeout):
            await self._stderr_done.wait()

    async def enforce_limits(self, max_age: float = 0.0) -> BotFault | None:
        """Check the family against the process and memory caps (on a scan at most
        ``max_age`` old); over a cap, kill the family and remember why."""
        family, limits = self.family, self.limits
        if self.limit_fault is not None or family is None:
            return self.limit_fault
        members = await sandbox.family_members(family, max_age)
        count = len(members) - (JAIL_PROCESSES if self.jail is not None else 0)
        if limits.max_processes and count > limits.max_processes:
            fault = BotFault(FaultReason.PROCESS_LIMIT,
                             f"ran {count} processes (cap {limits.max_processes})")
        elif limits.cpu_s and (cpu := max((m.cpu_s for m in members.values()), default=0.0)) >= limits.cpu_s:
            # RLIMIT_CPU's SIGXCPU names this cap too, but the kernel does not send it to a
            # sandboxed bot (pid 1 of its namespace ignores it): the watchdog names it first.
            fault = BotFault(FaultReason.CPU_LIMIT, f"used {cpu:.1f}s of CPU (CPU-time cap {limits.cpu_s}s)")
        elif limits.memory_mb and (rss := sum(m.rss_bytes for m in members.values())) > limits.memory_mb << 20:
            fault = BotFault(FaultReason.MEMORY_LIMIT,
                             f"{rss >> 20} MB resident in {len(members)} processes (cap {limits.memory_mb} MB)")
        else:
            return None
        self.limit_fault = fault
        self.log.info("bot_limit", reason=fault.reason.value, message=fault.message)
        with trio.CancelScope(shield=True):
            await sandbox.sweep(family)
        return fault

    # -- I/O -----------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Write bytes to the bot's stdin, waiting only if the pipe is full.

        The per-decision path: a request almost always fits in the pipe, so it is
        written at once, without the scheduler pass ``send_all`` takes first; the
        rest of a partial write goes through ``send_all`` (which waits for room,
        under the caller's deadline).  Raises ``trio.BrokenResourceError`` or
        ``trio.ClosedResourceError`` like ``send_all``."""
        stdin: Any = self.process.stdin  # type: ignore[union-attr]  # trio's FdStream (has fileno), once started
        try:
            sent = os.write(stdin.fileno(), data)  # trio made the fd non-blocking
        except BlockingIOError:
            sent = 0
        except BrokenPipeError:
            raise trio.BrokenResourceError("the bot closed its stdin") from None
        except OSError as exc:
            if exc.errno == errno.EBADF:
                raise trio.ClosedResourceError("stdin was already closed") from None
            raise trio.BrokenResourceError from exc
        if sent < len(data):
            await stdin.send_all(memoryview(data)[sent:])

    def receive_some_nowait(self) -> bytes | None:
        """What stdout holds right now, without waiting: bytes, ``b""`` at its end, None if nothing.

        Lets the runner catch output written between requests before the next
        request, wherever it falls relative to the runner's reads."""
        if self._early:
            return self._take_early()
        if self._stdout_eof:
            return b""
        # poll(0) first: on the per-decision path a read that finds nothing costs
        # three times as much (the failed syscall raises).
        if self._stdout_poll is None or not self._stdout_poll.poll(0):
            return None
        return self._read_nowait()

    def _read_nowait(self) -> bytes | None:
        """Whatever stdout holds right now; ``b""`` at its end, None if nothing (or no stdout)."""
        proc = self.process
        if self._stdout_eof or proc is None or proc.stdout is None:
            return None
        stdout: Any = proc.stdout  # trio's FdStream
        try:
            data = os.read(stdout.fileno(), _READ_CHUNK)  # trio made the fd non-blocking
        except OSError:  # BlockingIOError: nothing there yet
            return None
        if not data:
            self._stdout_eof = True
        return data

    def _take_early(self) -> bytes:
        data = bytes(self._early)
        self._early.clear()
        return data

    async def receive_some(self) -> bytes:
        """The next bytes from stdout, ``b""`` at its end.  Cancel from outside for a deadline."""
        assert self.process is not None and self.process.stdout is not None
        stdout: Any = self.process.stdout  # trio's FdStream
        while True:
            if self._early:
                return self._take_early()
            if self._stdout_eof or self.limit_fault is not None:
                return b""
            # Wait for the pipe first, then read: a reply is never there yet when this
            # is called, so this saves the scheduler pass and the failed read that
            # Trio's own ``receive_some`` starts with.  The watchdog closes stdout once the bot has
            # exited, which wakes this wait with ClosedResourceError (read as EOF).
            try:
                await trio.lowlevel.wait_readable(stdout.fileno())
                data = os.read(stdout.fileno(), _READ_CHUNK)
            except BlockingIOError:
                continue  # woken without data
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, ValueError):
                data = b""  # ValueError: fd -1, the stream was closed before the wait
            if not data:
                self._stdout_eof = True
                continue  # the watchdog may have taken the last bytes first
            if self._early:  # the watchdog read earlier bytes while this task waited
                self._early += data
                continue
            # Nothing is taken from a bot over a cap: not what the watchdog's kill is racing (it found
            # the bot over while this task waited, and sweeps its family), nor what a bot writes
            # with more processes than its cap, which the kernel's count says at once.
            if self.limit_fault is not None:
                return b""
            if self._tasks_fd >= 0 and self._over_task_count() and await self.enforce_limits() is not None:
                return b""
            return data

    def _over_task_count(self) -> bool:
        """Whether the kernel counts more tasks in the bot's cgroup than its process cap
        allows (one read of ``pids.current``; tasks include threads, so over means: scan)."""
        try:
            tasks = int(os.pread(self._tasks_fd, 32, 0))
        except (OSError, ValueError):
            return False
        return tasks > self._tasks_allowed

    def closed_its_stdout(self) -> bool:
        """Whether the bot, still running, holds its stdout pipe nowhere any more.

        Under bubblewrap the sandbox's own process outside keeps the pipe open, so
        a bot that closes its stdout gives the referee no end-of-file: on a
        timeout, this looks for the pipe among the bot's processes' fds."""
        proc, family = self.process, self.family
        if self.jail is None or proc is None or proc.stdout is None or family is None:
            return False
        try:
            stdout: Any = proc.stdout  # trio's FdStream
            pipe = f"pipe:[{os.fstat(stdout.fileno()).st_ino}]"
        except (OSError, ValueError):
            return False
        members = family.scan_now()
        bot = [pid for pid in members if pid != self.pid]  # all but bwrap outside
        if not bot:
            return False
        for pid in bot:
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == pipe:
                        return False
                except OSError:
                    continue
        return True

    async def ended_fault(self) -> BotFault:
        """Stdout or stdin broke: decide between a limit, an exit and a closed stdout."""
        assert self.process is not None
        if self.limit_fault is not None:
            return self.limit_fault
        with trio.move_on_after(0.25):
            await self.process.wait()
        if self.limit_fault is not None:
            return self.limit_fault
        code = self.returncode
        if code is not None and not self._gone:
            # (Once _gone, the stderr pump has had EXIT_DRAIN_S already; children may hold stderr open.)
            await self.wait_stderr_drained(0.2)
        if code is None:
            return BotFault(FaultReason.CLOSED_STDOUT, "closed its stdout but kept running")
        return self._exit_fault(code)

    def _exit_fault(self, code: int) -> BotFault:
        # The kernel sends SIGXCPU at the soft CPU limit; a bare SIGKILL is not ours to name.
        if code == -signal.SIGXCPU:
            return BotFault(FaultReason.CPU_LIMIT, f"{describe_exit(code)} (CPU-time cap {self.limits.cpu_s}s)")
        if code == -signal.SIGKILL and self.cgroup is not None and self.cgroup.oom_killed():
            return BotFault(FaultReason.MEMORY_LIMIT,
                            f"killed by the kernel at its memory cap (cgroup, {self.limits.memory_mb} MB)")
        tail = " ".join(self.stderr_tail()[-3:])
        if self.jail is not None and (bwrap := [t for t in self.stderr_tail() if t.startswith("bwrap: ")]):
            # bubblewrap could not set the sandbox up, or not find the program inside it
            return BotFault(FaultReason.EXITED, f"{describe_exit(code)} in the sandbox: {bwrap[-1]}")
        if self.limits.memory_mb and ("MemoryError" in tail or "bad_alloc" in tail or "out of memory" in tail.lower()):
            return BotFault(FaultReason.MEMORY_LIMIT, f"{describe_exit(code)} (memory cap {self.limits.memory_mb} MB)")
        return BotFault(FaultReason.EXITED, describe_exit(code))

    # -- stop ----------------------------------------------------------------

    async def aclose(self) -> None:
        """Shut down the bot and everything in its process group, boundedly."""
        proc = self.process
        if proc is None:
            return
        with trio.CancelScope(shield=True):
            try:
                if proc.stdin is not None:
                    with trio.move_on_after(0.05):
                        await proc.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            with trio.move_on_after(self.limits.grace_s):
                await proc.wait()
            if proc.returncode is None:
                self._signal_group(signal.SIGTERM)
                with trio.move_on_after(self.limits.term_s):
                    await proc.wait()
            # Always sweep the family: children the bot started may outlive it.
            self._signal_group(signal.SIGKILL)
            if proc.returncode is None:
                with trio.move_on_after(5):
                    await proc.wait()
            if self.family is not None:
                rounds = await sandbox.sweep(self.family)
                if rounds:
                    self.log.info("bot_descendants_killed", rounds=rounds, peak_processes=self.family.peak_processes)
            for stream in (proc.stdout,):
                if stream is not None:
                    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        await stream.aclose()
            if self._tasks_fd >= 0:
                os.close(self._tasks_fd)
                self._tasks_fd = -1
            await self._remove_cgroup_when_empty()

    def _signal_group(self, sig: int) -> None:
        if self.family is not None:
            sandbox.signal_group(self.family, sig)
