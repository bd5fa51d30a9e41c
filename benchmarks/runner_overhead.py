"""The referee's own work per decision, with the pipes taken out.

    python benchmarks/runner_overhead.py [--game back-alley] [--games 20]

Runs the real decision loop (``_Match._play``: engine, observation, request
encoding, reply check, record lines, Trio deadline handling) against
in-process stand-in bots whose ``write`` keeps the request and whose
``receive_some`` returns at once a plain action line for a random legal
action (each seat's ``protocol.machine.Conversation`` frames and judges it,
as with real bots).  What is left per decision is the referee's critical path plus its
record writing: the part of a round trip the referee can shorten.  The
baseline, measured in the same run, is what a bare JSON-lines ping-pong does
per round trip on its side: encode the same request with pydantic-core, and
decode a reply of the same form.  Hot caches flatter both; with real bots the
referee runs after a bot on the same core, cold.  Standard library + the
project only.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio
from pydantic_core import from_json, to_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import referee.match.runner as runner  # noqa: E402
from protocol import HelloMsg  # noqa: E402
from protocol.machine import Conversation, Ready  # noqa: E402
from referee.games import get_game  # noqa: E402
from referee.match.types import BotSpec, Limits  # noqa: E402


class StandIn:
    """Just enough of a ``BotChannel`` for ``_play``: answers every request at once."""

    limit_fault = None

    def __init__(self, seat: int, game: Game) -> None:
        self.seat = seat
        self.game = game

    async def write(self, data: bytes) -> None:
        self.game.requests.append((self.seat, data))

    async def receive_some(self) -> bytes:
        g = self.game
        legal = g.state.legal_actions()
        return b'{"type":"action","id":%d,"action":"%s"}\n' % (g.match.decisions, g.pick(legal).encode())

    def receive_some_nowait(self) -> bytes | None:
        return None


class Game:
    def __init__(self, name: str, seed: int, record: Path | None) -> None:
        spec = get_game(name)
        options = spec.normalize_options({})
        n = spec.num_seats(options)
        bots = [BotSpec(f"b{s}", ("none",)) for s in range(n)]
        self.match = runner._Match(name, options, bots, seed, record, Limits(), None)
        self.match.wants_events = [False] * n  # as the sample bots say in their `ready`
        self.match.any_wants_events = False
        self.state, self.events = spec.new_game(seed, options)
        self.procs = [StandIn(s, self) for s in range(n)]
        self.convs = [ready_conversation() for _ in range(n)]
        self.requests: list[tuple[int, bytes]] = []
        rng = random.Random(seed)
        self.pick = lambda legal: legal[int(rng.random() * len(legal))]

    async def play(self) -> tuple[int, float]:
        m = self.match
        if m.record_path is not None:
            m.writer = runner.RecordWriter(m.record_path)
        t0 = time.perf_counter()
        fault, _ = await m._play(self.procs, self.convs, self.state, self.events)
        elapsed = time.perf_counter() - t0
        assert fault is None, fault
        if m.writer is not None:
            m.writer.close()
        return m.decisions, elapsed


def ready_conversation() -> Conversation:
    """A conversation past its handshake, as ``_play`` finds it."""
    conv = Conversation()
    conv.send_hello(HelloMsg(game="back-alley", rules_version="1", options={}, seat=0, team=0, seats=4,
                             teams=[[0, 2], [1, 3]], limits={"handshake_ms": 1, "decision_ms": 1}))
    conv.receive_data(b'{"type":"ready","name":"x","events":false}\n')
    assert isinstance(conv.next_event(), Ready)
    return conv


def baseline(requests: list[tuple[int, bytes]]) -> float:
    """Seconds for a bare ping-pong's own side of the same round trips."""
    messages = [from_json(line) for _, line in requests]
    reply = b'{"type":"action","id":1,"action":"AS"}'
    t0 = time.perf_counter()
    for msg in messages:
        to_json(msg) + b"\n"
        from_json(reply)
    return time.perf_counter() - t0


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--game", default="back-alley")
    ap.add_argument("--games", type=int, default=20)
    args = ap.parse_args()
    per_dec: list[float] = []
    base: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for g in range(args.games):
            game = Game(args.game, g, Path(tmp) / f"g{g}.jsonl")
            n, elapsed = await game.play()
            per_dec.append(elapsed / n * 1e6)
            base.append(baseline(game.requests) / n * 1e6)
    ref, bl = statistics.median(per_dec), statistics.median(base)
    print(f"{args.game}: referee's own work per decision over {args.games} games (record written)")
    print(f"  referee decision loop      {ref:7.1f} us median   {min(per_dec):7.1f} us best game")
    print(f"  bare ping-pong's side      {bl:7.1f} us median   {min(base):7.1f} us best game"
          "   (encode request + decode reply)")
    print(f"  ratio referee / baseline   {ref / bl:7.2f}          {min(per_dec) / min(base):7.2f}")
    print("(the best game is the steadier figure when anything else runs on the machine)")


if __name__ == "__main__":
    trio.run(main)
