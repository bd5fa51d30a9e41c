"""Helpers for the hostile-bot tests: the misbehaving bots, orphan checks, referee memory."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import trio

from referee.match.sandbox import BOT_ID_ENV, RUN_ID_ENV
from referee.match.types import BotSpec, FaultReason, Limits

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "sample_bots" / "misbehaving"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
MARK_ENV = "REFEREE_TEST_MARK"

# Small limits keep the matrix fast; teardown grace is short too. The handshake limit is not
# small: the innocent bots start (a Python interpreter each) within it, which took over 2 s on a
# loaded machine (load 18, xdist workers) and forfeited an innocent seat; only the bot that never
# says ready waits it out, and its case sets 2 s.
FAST = Limits(handshake_s=15.0, decision_s=0.3, grace_s=0.2, term_s=0.2)


@dataclass(frozen=True)
class Case:
    """One misbehaving bot and what the referee must say about it."""

    bot: str
    reason: FaultReason
    says: str  # a fragment of the fault's stderr tail (the bot announces its misbehaviour)
    message: str = ""  # a fragment of the fault message
    args: tuple[str, ...] = ()
    limits: dict = field(default_factory=dict)
    legal_decisions: int = 2  # decisions it makes before the fault (0: it fails the handshake)

    @property
    def id(self) -> str:
        return self.bot

    def spec(self) -> BotSpec:
        return BotSpec(name=self.bot, command=(sys.executable, str(MISBEHAVING / f"{self.bot}.py"), *self.args))

    def with_limits(self, base: Limits = FAST) -> Limits:
        values = base.to_json()
        values.update(self.limits)
        return Limits(**values)


R = FaultReason
# The fault matrix of issue 5, in its order, plus the CPU-time cap.
CASES = [
    Case("exit_at_once", R.EXITED, "exiting with code 3", "exited with code 3", legal_decisions=0),
    Case("silent_handshake", R.HANDSHAKE_TIMEOUT, "will never say ready", "no ready within 2s", legal_decisions=0,
         limits={"handshake_s": 2.0}),
    Case("crash_mid_game", R.EXITED, "RuntimeError: crashed on purpose mid-game", "exited with code 1"),
    Case("hang", R.TIMEOUT, "hanging on request", "no reply to request"),
    Case("late_answer", R.TIMEOUT, "s late", "within 0.300s"),
    Case("invalid_json", R.INVALID_JSON, "with broken JSON"),
    Case("wrong_shape", R.WRONG_MESSAGE, "with a string id", "action.id"),
    Case("wrong_request_id", R.WRONG_REQUEST, "as ", "expected"),
    Case("illegal_action", R.ILLEGAL_ACTION, "with an illegal action", "is not among the"),
    Case("invalid_action", R.INVALID_ACTION, "with text that is no action", "'not-an-action' is not an action of"),
    Case("huge_line", R.LINE_TOO_LONG, "100 MB line", "longer than 1048576 bytes"),
    # Its third answer is fine; the lines after it are caught before its next request.
    Case("flood_stdout", R.UNEXPECTED_MESSAGE, "then flooding stdout", "no request was pending",
         legal_decisions=3),
    # Floods stderr for its whole decision time (and would for gigabytes, if drained).
    Case("flood_stderr", R.TIMEOUT, "stderr flood", "no reply", limits={"decision_s": 1.5, "stderr_keep_bytes": 65536}),
    Case("ignore_sigterm", R.TIMEOUT, "ignoring SIGTERM", "no reply"),
    Case("grandchild", R.EXITED, "leaving my child and grandchild behind", "exited with code 0"),
    Case("memory_hog", R.MEMORY_LIMIT, "allocating without bound", "cap 256 MB",
         limits={"memory_mb": 256, "decision_s": 3.0}),
    Case("close_stdout", R.CLOSED_STDOUT, "closing stdout", "closed its stdout"),
    Case("not_utf8", R.INVALID_UTF8, "not UTF-8", "is not UTF-8"),
    Case("fork_bomb", R.PROCESS_LIMIT, "forking up to", "processes (cap 32)", limits={"decision_s": 3.0}),
    # 1 s of CPU must come before the decision deadline: 30 s of wall clock hold even when the
    # bot gets a thirtieth of a core (a shared machine at load 26 gave it less than a quarter).
    Case("cpu_spin", R.CPU_LIMIT, "spinning on request", "CPU-time cap 1s", limits={"cpu_s": 1, "decision_s": 30.0}),
    Case("partial_line", R.PARTIAL_LINE, "without a newline, then exiting",
         "a partial line without a newline arrived"),
]
CASES_BY_BOT = {c.bot: c for c in CASES}


def random_bot(seed: int, name: str = "random") -> BotSpec:
    return BotSpec(name=name, command=(sys.executable, str(RANDOM_BOT), str(seed)))


# -- orphans -------------------------------------------------------------------------


@contextmanager
def marked_processes(monkeypatch) -> Iterator[str]:
    """Every process started inside carries MARK_ENV=<token> (bots inherit the environment)."""
    token = uuid.uuid4().hex
    monkeypatch.setenv(MARK_ENV, token)
    monkeypatch.setenv(RUN_ID_ENV, token)  # sandboxed bots lose MARK_ENV but keep their bot id
    yield token
    monkeypatch.delenv(MARK_ENV)
    monkeypatch.delenv(RUN_ID_ENV)


def live_marked(token: str) -> list[psutil.Process]:
    """Live (non-zombie) processes whose environment carries the token."""
    out = []
    for p in psutil.process_iter():
        try:
            env = p.environ()
            marked = env.get(MARK_ENV) == token or env.get(BOT_ID_ENV, "").startswith(token + "-")
            if marked and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return out


def command_line(p: psutil.Process) -> str:
    """A process's command line, or "" once it has ended: a process listed a moment
    ago may be gone (a game's bots leave when it ends), and asking then raises."""
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def _if_alive(pid: int) -> psutil.Process | None:
    """The process, unless it has ended (or is a zombie) by the time we look."""
    try:
        p = psutil.Process(pid)
        return p if p.status() != psutil.STATUS_ZOMBIE else None
    except psutil.NoSuchProcess:
        return None


def alive(pid: int) -> bool:
    return _if_alive(pid) is not None


def assert_no_survivors(token: str, pids: tuple[int, ...] = (), within_s: float = 2.0) -> None:
    """SIGKILL is asynchronous: give the kernel a moment, then insist."""
    deadline = time.monotonic() + within_s
    while True:
        left = live_marked(token) + [p for p in map(_if_alive, pids) if p is not None]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    described = []
    for p in left:
        try:
            described.append(f"{p.pid} {p.status()} {' '.join(p.cmdline())[:120]}")
        except psutil.Error:
            described.append(str(p.pid))
    assert not left, "processes of the game survived it:\n" + "\n".join(described)


def pids_in(lines: tuple[str, ...] | list[str], sandbox: str = "off") -> tuple[int, ...]:
    """Pids a bot announced on stderr ("... pid 1234"); none for a sandboxed bot, whose
    pids are its own pid namespace's (its processes are found by their bot id instead)."""
    if sandbox != "off":
        return ()
    return tuple(int(m) for line in lines for m in re.findall(r"\bpid (\d+)", line))


# -- referee memory ---------------------------------------------------------------------


class PeakRss:
    """Samples this process's resident memory while a block runs (in a Trio task)."""

    def __init__(self, every_s: float = 0.02) -> None:
        self.every_s = every_s
        self.me = psutil.Process()
        self.baseline = self.me.memory_info().rss
        self.peak = self.baseline

    async def run(self, task_status=trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            self.peak = max(self.peak, self.me.memory_info().rss)
            await trio.sleep(self.every_s)

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.baseline) / 2**20

    @property
    def peak_mb(self) -> float:
        return self.peak / 2**20


def count_lines(path: Path) -> int:
    """Lines in a file that may not exist yet (a record or results.jsonl being written)."""
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kill_when(proc: subprocess.Popen, ready, *, timeout: float = 60, group: bool = False) -> None:
    """SIGKILL a running referee once ready(): the process alone, or with ``group`` its
    whole process group (started with start_new_session).  Bots and tournament workers
    live in sessions of their own either way: they must notice by themselves."""
    deadline = time.monotonic() + timeout
    try:
        while not ready():
            assert proc.poll() is None, "finished before it could be killed"
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.002)
    finally:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
