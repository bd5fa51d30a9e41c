"""A small helper for writing bots in Python: a bot is one function.

    from protocol.bot import run

    def decide(request):
        return request.legal[0]          # one of the legal action strings

    if __name__ == "__main__":
        run(decide, name="first")

``run`` does the whole protocol (docs/protocol.md): it answers ``hello`` with
``ready``, calls ``decide`` for every ``request`` and sends its answer as the
``action``.  By default one process plays **many games**, one after another
(protocol version 2): after ``game_over`` it waits for the next ``hello`` and
returns when its input ends, so whatever the bot loads at start-up (a model,
tables) is loaded once per tournament, not once per game.  ``games=1`` plays
one game and returns after ``game_over`` (version 1); ``games=N`` plays at
most N and then answers the next ``hello`` with ``bye``.  ``tables=K`` serves
up to K games at once, every line tagged with its ``table`` (each
``Request`` says its ``table``); ``decide`` is still called one request at a
time, in the order they arrive.  Optional hooks see the rest:

* ``on_hello(hello)`` — the ``hello`` message as a dict, before ``ready``;
* ``on_event(event)`` — each ``event``'s inner dict (``{"type": "play", ...}``).
  Giving this hook is what asks the referee for events; without it the bot
  says ``"events": false`` and plays from each request's ``state`` alone;
* ``on_game_over(message)`` — the ``game_over`` message as a dict.

With ``tables`` > 1 each hook gets the table id as a second argument.
A bot that keeps state between games must reset it in ``on_hello``.

``run_policy(policy)`` plays with a policy trained on ``referee.env``
(docs/learning.md): ``policy(obs, mask)`` gets the same NumPy arrays the
environment gives an agent and returns an action id.

The helper uses only the standard library (``json``), so it adds no start-up
time of its own and does not depend on the referee's engines (``run_policy``
imports NumPy when it is called).  A bot that
needs no helper at all is ``sample_bots/random_bot.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = ["IllegalPolicyAction", "Request", "run", "run_policy"]


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
    table: int = 0  # the game's table at this process (hello's ``table``)

    @property
    def game(self) -> str:
        """The game's registry name, e.g. ``"back-alley"`` (from ``hello``)."""
        return self.hello.get("game", "")


def run(
    decide: Callable[[Request], str],
    *,
    name: str = "bot",
    on_hello: Callable[..., None] | None = None,
    on_event: Callable[..., None] | None = None,
    on_game_over: Callable[..., None] | None = None,
    games: int | str = "many",
    tables: int = 1,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Play games over stdin/stdout; return 0 at the end of input (or after the last of ``games``).

    An exception raised by ``decide`` or a hook is not caught: the traceback
    goes to stderr, the process ends and the referee records the fault with
    the last lines of stderr.  An answer that is not among the legal actions
    is sent anyway (the referee is the judge) after a warning on stderr.
    """
    if games != "many" and not (isinstance(games, int) and games >= 1):
        raise ValueError(f'games must be "many" or a positive integer, got {games!r}')
    if not 1 <= tables <= 64:
        raise ValueError(f"tables must be 1 to 64, got {tables!r}")
    inp = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    tagged = tables > 1
    hellos: dict[Any, dict[str, Any]] = {}  # by table (None: untagged)
    started = finished = 0

    def send(msg: dict[str, Any], table: Any) -> None:
        if tagged:  # the table right after the type: the form the referee routes without decoding the line
            msg = {"type": msg.pop("type"), "table": table, **msg}
        out.write(json.dumps(msg, separators=(",", ":")) + "\n")
        out.flush()

    def hook(fn: Callable[..., None] | None, arg: dict[str, Any], table: Any) -> None:
        if fn is not None:
            fn(arg, table) if tagged else fn(arg)

    for line in inp:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        table = msg.get("table") if tagged else None
        if kind == "request":
            request = Request(
                id=msg["id"], seat=msg["seat"], decision=msg["decision"], state=msg["state"],
                legal=msg["legal"], time_ms=msg["time_ms"], hello=hellos.get(table, {}),
                table=msg.get("table", 0),
            )
            action = decide(request)
            if action not in request.legal:
                print(f"{name}: decide() returned {action!r}, which is not among the "
                      f"{len(request.legal)} legal actions; sending it anyway", file=sys.stderr)
            send({"type": "action", "id": request.id, "action": action}, table)
        elif kind == "event":
            hook(on_event, msg["event"], table)
        elif kind == "hello":
            if games != "many" and started >= games:  # type: ignore[operator]
                send({"type": "bye"}, table)
                continue
            started += 1
            hellos[table] = msg
            hook(on_hello, msg, table)
            ready: dict[str, Any] = {"type": "ready", "name": name, "events": on_event is not None}
            if games != 1:
                ready["games"] = games
            if tagged:
                ready["tables"] = tables
            send(ready, table)
        elif kind == "game_over":
            hellos.pop(table, None)
            hook(on_game_over, msg, table)
            finished += 1
            if games == 1:
                return 0  # version 1: one game per process
    return 0


class IllegalPolicyAction(ValueError):
    """A policy chose an action id its mask does not allow (the environment's ``IllegalActionId``)."""


def policy_decider(policy: Callable[[Any, Any], int]) -> Callable[[Request], str]:
    """The ``decide`` function of ``run_policy``: a request's state and legal list through
    ``protocol.encoding`` (the encoding ``referee.env`` uses), the policy's ids back to text.

    A Pegs and Jokers move takes several ids: the policy is called once per id with the
    move chosen so far in the observation, as the environment does."""
    import numpy as np

    from protocol.encoding import Encoding, encoding_for

    encodings: dict[str, Encoding] = {}

    def decide(request: Request) -> str:
        options = request.hello.get("options") or {}
        key = request.game + json.dumps(options, sort_keys=True)
        enc = encodings.get(key)
        if enc is None:
            enc = encodings[key] = encoding_for(request.game, options)
        state = request.state

        def choose(prefix: tuple[int, ...], mask: bytearray) -> int:
            obs = np.frombuffer(enc.encode(state, prefix), dtype=np.int32)
            action = policy(obs, np.frombuffer(bytearray(mask), dtype=np.int8))
            a = int(action)
            if not 0 <= a < len(mask) or not mask[a]:
                raise IllegalPolicyAction(
                    f"the policy chose id {action!r}, which is not legal (legal ids: "
                    f"{[i for i, m in enumerate(mask) if m]})")
            return a

        if enc.end is None:
            return enc.action_names[choose((), enc.mask(request.legal))]
        decision = enc.decision(request.legal)
        prefix: tuple[int, ...] = ()
        while True:
            prefix += (choose(prefix, decision.mask(prefix)),)
            text = decision.text(prefix)
            if text is not None:
                return text

    return decide


def run_policy(policy: Callable[[Any, Any], int], *, name: str = "policy", **kwargs: Any) -> int:
    """Play games with ``policy(obs, mask) -> action id``, the shape of an agent of
    ``referee.env`` (docs/learning.md), over stdin/stdout as ``run`` does (``kwargs``
    are ``run``'s).  ``obs`` and ``mask`` are the NumPy arrays the environment would
    give the seat (int32 and int8); an id the mask does not allow raises
    ``IllegalPolicyAction`` (the process ends and the referee records the crash)."""
    return run(policy_decider(policy), name=name, **kwargs)
