"""The seam between the match runner and a bot: bytes in, bytes out, and why it ended.

``BotProcess`` (referee.match.bot) is the real channel, a subprocess in its
sandbox; the runner's tests use an in-memory fake (tests/match/fakes.py)
under Trio's ``MockClock``, so timing, time bank and fault logic are tested
without processes or real time.  The channel knows nothing of the protocol:
the runner feeds what it reads to a ``protocol.machine.Conversation``.
"""

from __future__ import annotations

import abc
import signal
from typing import Any

import trio

from referee.match.types import FaultReason


class BotFault(Exception):
    """The bot misbehaved: its fault, not ours."""

    def __init__(self, reason: FaultReason, message: str, output: bytes | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.output = output  # the offending output (a line, or what arrived of one), if any


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name}"
    return f"exited with code {returncode}"


class BotChannel(abc.ABC):
    """One bot as the runner sees it.

    ``write`` and the two ``receive_some`` are the per-decision path; the
    rest explains an end (``ended_fault``, ``enforce_limits``,
    ``closed_its_stdout``, ``stderr_tail``) or shuts the bot down."""

    seat: int
    log: Any  # a structlog logger bound to the game and this seat
    limit_fault: BotFault | None = None  # set when the bot was killed for a cap, even between its turns
    # Long-lived bots (protocol version 2, referee.match.pool):
    reused: bool = False  # its process played a game before this one (its handshake limit is decision_s)
    table: int = 0  # this game's table at its process (in ``hello``)
    keep: bool = False  # set by the runner once the game ended well for this seat: the process may play on

    def fault_holder(self) -> Any:
        """What carries this channel's ``limit_fault`` (the process the watchdog polices):
        the runner reads it there on every decision, without a layer in between.  Valid
        once the channel has started (a channel that wraps another returns the inner one's)."""
        return self

    def adopt(self, ready: Any) -> None:
        """The bot's ``ready`` (a ``protocol.machine.Ready``) for this game: what it said it can do."""
        return None

    async def replace(self, nursery: trio.Nursery) -> None:
        """The bot said ``bye`` to a later ``hello``: continue with a fresh process (started)."""
        raise BotFault(FaultReason.WRONG_MESSAGE, "said bye to its first hello")

    @abc.abstractmethod
    async def start(self, nursery: trio.Nursery) -> None:
        """Start the bot; helper tasks run in ``nursery``.  Raises ``BotFault`` (spawn_failed)."""

    @property
    @abc.abstractmethod
    def started(self) -> bool:
        """Whether ``start`` succeeded (a bot that never started is sent nothing)."""

    @abc.abstractmethod
    async def write(self, data: bytes) -> None:
        """Write to the bot's stdin, waiting only while it is full.  Raises
        ``trio.BrokenResourceError`` or ``trio.ClosedResourceError``."""

    async def send(self, data: bytes, timeout: float) -> None:
        """Write within ``timeout`` seconds, or raise ``BotFault``."""
        try:
            with trio.fail_after(timeout):
                await self.write(data)
        except trio.TooSlowError:
            raise BotFault(FaultReason.NOT_READING, f"stdin stayed full for {timeout:g}s") from None
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise await self.ended_fault() from None

    @abc.abstractmethod
    async def receive_some(self) -> bytes:
        """The next bytes the bot wrote, ``b""`` at the end of its output.  Cancel from outside for a deadline."""

    @abc.abstractmethod
    def receive_some_nowait(self) -> bytes | None:
        """What the bot has written and was not yet taken, ``b""`` at the end, None if nothing is there."""

    @abc.abstractmethod
    async def ended_fault(self) -> BotFault:
        """Its output or input broke: the fault that explains it (a cap, an exit, a closed stdout)."""

    async def enforce_limits(self) -> BotFault | None:
        """Check the caps now; the fault if the bot is over one (and was killed for it)."""
        return self.limit_fault

    def closed_its_stdout(self) -> bool:
        """Whether the bot, still running, no longer holds its stdout (asked on a timeout)."""
        return False

    def stderr_tail(self) -> tuple[str, ...]:
        return ()

    async def wait_stderr_drained(self, timeout: float = 0.3) -> None:
        return None

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Shut the bot down, boundedly and shielded."""
