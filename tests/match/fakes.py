"""An in-memory bot for the runner's tests: no process, and time only Trio's.

A ``FakeBot`` is a ``BotChannel`` whose other end is a script, an async
function of the bot: it reads what the referee wrote (``await bot.read()``),
writes bytes (``bot.say``), sleeps on Trio's clock, exits or closes its
stdout.  Under ``trio.testing.MockClock(autojump_threshold=0)`` (pytest-trio's
``autojump_clock`` fixture) every sleep and deadline is exact and instant,
so timing tests are deterministic on any machine.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
import trio

from referee.match.channel import BotChannel, BotFault, describe_exit
from referee.match.runner import run_match
from referee.match.types import BotSpec, FaultReason, Limits, MatchResult

Script = Callable[["FakeBot"], Awaitable[Any]]


class FakeBot(BotChannel):
    def __init__(self, seat: int, spec: BotSpec, script: Script) -> None:
        self.seat = seat
        self.spec = spec
        self.log = structlog.get_logger("tests.fake").bind(seat=seat)
        self.script = script
        self.rng = random.Random(seat)  # for a legal action of its own choosing, the same every run
        self.received: list[tuple[float, dict]] = []  # (when, message) for every line the referee wrote
        self.returncode: int | None = None
        self.stops_reading = False  # set by a script: the referee's writes block from then on
        self.closed_at: float | None = None
        self._started = False
        self._partial = b""
        self._to_bot, self._from_referee = trio.open_memory_channel[dict](math.inf)
        self._stdout, self._from_bot = trio.open_memory_channel[bytes](math.inf)
        self._scope = trio.CancelScope()

    # -- the referee's side -------------------------------------------------------

    async def start(self, nursery: trio.Nursery) -> None:
        self._started = True
        nursery.start_soon(self._run)

    @property
    def started(self) -> bool:
        return self._started

    async def _run(self) -> None:
        with self._scope:
            code = await self.script(self)
            self.exit(0 if code is None else code)

    async def write(self, data: bytes) -> None:
        if self.returncode is not None:
            raise trio.BrokenResourceError("the fake bot has exited")
        if self.stops_reading:
            await trio.sleep_forever()
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            msg = json.loads(line)
            self.received.append((trio.current_time(), msg))
            self._to_bot.send_nowait(msg)

    async def receive_some(self) -> bytes:
        try:
            return await self._from_bot.receive()
        except trio.EndOfChannel:
            return b""

    def receive_some_nowait(self) -> bytes | None:
        try:
            return self._from_bot.receive_nowait()
        except trio.WouldBlock:
            return None
        except trio.EndOfChannel:
            return b""

    async def ended_fault(self) -> BotFault:
        await trio.lowlevel.checkpoint()
        if self.limit_fault is not None:  # as BotProcess: killed for a cap by its watchdog
            return self.limit_fault
        if self.returncode is None:
            return BotFault(FaultReason.CLOSED_STDOUT, "closed its stdout but kept running")
        return BotFault(FaultReason.EXITED, describe_exit(self.returncode))

    async def aclose(self) -> None:
        self._scope.cancel()
        if self.closed_at is None:
            self.closed_at = trio.current_time()
        await trio.lowlevel.checkpoint()

    # -- the bot's side (for scripts) -------------------------------------------------

    async def read(self) -> dict:
        """The next message the referee wrote."""
        return await self._from_referee.receive()

    def say(self, data: bytes) -> None:
        """Write bytes to the bot's stdout (nothing, once it is closed)."""
        with contextlib.suppress(trio.ClosedResourceError):
            self._stdout.send_nowait(data)

    def close_stdout(self) -> None:
        self._stdout.close()

    def exit(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
            self._stdout.close()

    def answer(self, request: dict) -> bytes:
        """A legal answer of its own choosing (always the first legal one would never bid: every deal redealt)."""
        return action(request, self.rng.choice(request["legal"]))

    def requests(self) -> list[tuple[float, dict]]:
        return [(t, m) for t, m in self.received if m["type"] == "request"]


# -- scripts ------------------------------------------------------------------------------


def action(request: dict, choice: str | None = None, id: int | None = None) -> bytes:
    """The action line for a request: its first legal action unless told otherwise."""
    return json.dumps({"type": "action", "id": request["id"] if id is None else id,
                       "action": request["legal"][0] if choice is None else choice}).encode() + b"\n"


async def handshake(bot: FakeBot, *, after: float = 0.0, events: bool = False) -> dict:
    hello = await bot.read()
    assert hello["type"] == "hello"
    await trio.sleep(after)
    bot.say(json.dumps({"type": "ready", "name": f"fake{bot.seat}", "events": events}).encode() + b"\n")
    return hello


def player(delay: Callable[[int], float] = lambda n: 0.0,
           reply: Callable[[int, dict], bytes | None] | None = None,
           *, events: bool = False) -> Script:
    """A bot that answers its n-th request (from 1) after ``delay(n)`` seconds with
    ``reply(n, request)`` (bytes to write; None: write nothing and end the script, an exit),
    by default a legal action (``FakeBot.answer``)."""

    async def script(bot: FakeBot) -> int:
        await handshake(bot, events=events)
        n = 0
        while True:
            msg = await bot.read()
            if msg["type"] == "game_over":
                return 0
            if msg["type"] != "request":
                continue
            n += 1
            await trio.sleep(delay(n))
            data = bot.answer(msg) if reply is None else reply(n, msg)
            if data is None:
                return 0
            bot.say(data)

    return script


async def play(scripts: dict[int, Script], limits: Limits, *, game: str = "back-alley", seed: int = 1,
               record_path=None, **run) -> tuple[MatchResult, dict[int, FakeBot]]:
    """One game with a fake bot at every seat: ``scripts`` by seat, prompt players elsewhere."""
    from referee.games import get_game

    spec = get_game(game)
    seats = spec.num_seats(spec.normalize_options({}))
    bots: dict[int, FakeBot] = {}

    def channel(seat: int, bot: BotSpec) -> FakeBot:
        bots[seat] = FakeBot(seat, bot, scripts.get(seat, player()))
        return bots[seat]

    specs = [BotSpec(f"fake{s}", ("fake",)) for s in range(seats)]
    result = await run_match(game, {}, specs, seed=seed, limits=limits, record_path=record_path,
                             _channels=channel, **run)
    return result, bots
