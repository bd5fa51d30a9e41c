"""A small helper for writing bots in Python: a bot is one function.

    from protocol.bot import run

    def decide(request):
        return request.legal[0]          # one of the legal action strings

    if __name__ == "__main__":
        run(decide, name="first")

``run`` does the whole protocol (docs/protocol.md): it answers ``hello`` with
``ready``, calls ``decide`` for every ``request`` and sends its answer as the
``action``, and returns after ``game_over``.  Optional hooks see the rest:

* ``on_hello(hello)`` — the ``hello`` message as a dict, before ``ready``;
* ``on_event(event)`` — each ``event``'s inner dict (``{"type": "play", ...}``).
  Giving this hook is what asks the referee for events; without it the bot
  says ``"events": false`` and plays from each request's ``state`` alone;
* ``on_game_over(message)`` — the ``game_over`` message as a dict.

The helper uses only the standard library (``json``), so it adds no start-up
time of its own and does not depend on the referee's engines.  A bot that
needs no helper at all is ``sample_bots/random_bot.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = ["Request", "run"]


@dataclass(frozen=True, slots=True)
class Request:
    """One ``request`` from the referee, plus the ``hello`` that began the game.

    ``state`` is the game-specific observation (docs/games/*.md) and ``legal``
    every legal action; ``decide`` must return one of ``legal`` verbatim.
    """

    id: int
    seat: int
    decision: str
    state: dict[str, Any]
    legal: list[str]
    time_ms: int
    hello: dict[str, Any] = field(default_factory=dict)

    @property
    def game(self) -> str:
        """The game's registry name, e.g. ``"back-alley"`` (from ``hello``)."""
        return self.hello.get("game", "")


def run(
    decide: Callable[[Request], str],
    *,
    name: str = "bot",
    on_hello: Callable[[dict[str, Any]], None] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    on_game_over: Callable[[dict[str, Any]], None] | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Play one game over stdin/stdout; return 0 after ``game_over`` or end of input.

    An exception raised by ``decide`` or a hook is not caught: the traceback
    goes to stderr, the process ends and the referee records the fault with
    the last lines of stderr.  An answer that is not among the legal actions
    is sent anyway (the referee is the judge) after a warning on stderr.
    """
    inp = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    hello: dict[str, Any] = {}
    for line in inp:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "request":
            request = Request(
                id=msg["id"], seat=msg["seat"], decision=msg["decision"], state=msg["state"],
                legal=msg["legal"], time_ms=msg["time_ms"], hello=hello,
            )
            action = decide(request)
            if action not in request.legal:
                print(f"{name}: decide() returned {action!r}, which is not among the "
                      f"{len(request.legal)} legal actions; sending it anyway", file=sys.stderr)
            out.write(json.dumps({"type": "action", "id": request.id, "action": action}) + "\n")
            out.flush()
        elif kind == "event":
            if on_event is not None:
                on_event(msg["event"])
        elif kind == "hello":
            hello = msg
            if on_hello is not None:
                on_hello(msg)
            ready = {"type": "ready", "name": name, "events": on_event is not None}
            out.write(json.dumps(ready) + "\n")
            out.flush()
        elif kind == "game_over":
            if on_game_over is not None:
                on_game_over(msg)
            return 0
    return 0
