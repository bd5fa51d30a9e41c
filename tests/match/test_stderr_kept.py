"""A bot's stderr reaches its file even when its game is stopped from outside.

``referee ask`` cancels the game once it has the asked seat's reply; before,
the stderr pump was cancelled with it, and what the bot wrote to stderr just
before its reply (still in the pipe) was lost about half the time: a flaky
``tests/replay/test_request_lines.py``.  Here a real process writes 200 KB to
stderr, then a line to stdout; the game is cancelled the moment that line is
read, ten times over: every byte must be in the file every time.
"""

from __future__ import annotations

import sys

import trio

from referee.match.bot import BotProcess
from referee.match.types import BotSpec, Limits

SIZE = 200_000
WRITER = (
    "import sys\n"
    "sys.stdin.readline()\n"
    f"sys.stderr.buffer.write(b'x' * {SIZE - 4} + b'end\\n'); sys.stderr.flush()\n"
    "sys.stdout.write('done\\n'); sys.stdout.flush()\n"
    "sys.stdin.readline()\n"
)


async def test_stderr_written_before_a_cancel_is_kept_in_full(tmp_path):
    limits = Limits(sandbox="off", stderr_keep_bytes=1 << 20)
    for i in range(10):
        path = tmp_path / f"stderr{i}.log"
        bot = BotProcess(0, BotSpec("writer", (sys.executable, "-c", WRITER)), limits, path, None, log=None)
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                await bot.start(nursery)
                await bot.send(b"go\n", 5.0)
                got = b""
                with trio.fail_after(10):
                    while b"\n" not in got:
                        got += await bot.receive_some()
                scope.cancel()  # as `referee ask` stops a game: the stderr pump is cancelled too
        with trio.CancelScope(shield=True):
            await bot.aclose()
        assert got == b"done\n"
        data = path.read_bytes()
        assert len(data) == SIZE and data.endswith(b"end\n"), (i, len(data))
