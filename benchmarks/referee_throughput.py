"""Referee decisions per second against a bare Trio JSON-lines ping-pong.

Both sides use the same four `sample_bots/random_bot.py` processes and the
same messages: the baseline replays the exact requests a real game sent
(same sizes, same legal lists), and per round trip it does what a minimal
JSON-lines ping-pong does: encode the message to one JSON line (with
pydantic-core's Rust encoder, the fastest at hand), write it, read the reply
line and decode it (pydantic-core again).  The referee figure is a full game
through `run_match` (engine, observation, encoding, decoding, legality check,
record written to a file).  Bot start-up is excluded from both.
Target: referee >= 70 % of the baseline rate.

A stricter second baseline writes the pre-encoded bytes and does not decode
the reply at all (pure pipe round trips); its ratio is printed too.
The referee process's CPU time per decision is printed for all three: it is
much steadier than rates when anything else runs on the machine.

Each game is followed at once by its two baselines, so each game gives a
paired ratio; the median of those is printed beside the ratio of medians
(the pairs cancel the machine's drift between games).  ``--pin`` pins the
benchmark process, and so every bot it starts, to one core, as tournament
workers do: pipe round trips are then cheap and the referee's own work
weighs more.

Usage: python benchmarks/referee_throughput.py [--game back-alley] [--games 9] [--pin]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio
from pydantic_core import from_json, to_json

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from machine import cpu_ticks  # noqa: E402  (benchmarks/machine.py)
from protocol.codec import encode_request  # noqa: E402
from referee.match.bot import BotProcess  # noqa: E402
from referee.match.record import read_record  # noqa: E402
from referee.match.runner import run_match  # noqa: E402
from referee.match.types import BotSpec, Limits  # noqa: E402

BOT = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]
C_SOURCE = ROOT / "sample_bots" / "c" / "random_bot.c"


def c_bot() -> list[str]:
    """The C random bot, built with the documented command where it is documented to live."""
    exe = C_SOURCE.with_suffix("")
    if not exe.exists() or exe.stat().st_mtime < C_SOURCE.stat().st_mtime:
        subprocess.run(["cc", "-std=c99", "-O2", "-o", str(exe), str(C_SOURCE)], check=True)
    return [str(exe)]


async def pingpong(requests: list[tuple[int, dict]], seats: int, *, json_lines: bool) -> tuple[float, float]:
    """Send the same requests to the same bots and read each reply: nothing else.

    With ``json_lines`` each request is encoded when sent and each reply
    decoded; without, pre-encoded bytes go out and replies stay bytes.  Both
    use the runner's own pipe primitives (``BotProcess.write`` and
    ``receive_some``; a reply line comes in one read), so the ratio measures
    the referee's own work."""
    limits = Limits()
    procs = [BotProcess(s, BotSpec("random", tuple(BOT + [str(s)])), limits, None) for s in range(seats)]
    encoded = [(seat, to_json(msg) + b"\n") for seat, msg in requests]
    async with trio.open_nursery() as nursery:
        for p in procs:
            await p.start(nursery)
            await p.send(b'{"type":"hello"}\n', 5)
            await p.receive_some()
        t0, c0 = time.perf_counter(), time.process_time()
        if json_lines:
            for seat, msg in requests:
                p = procs[seat]
                await p.write(to_json(msg) + b"\n")
                from_json(await p.receive_some())
        else:
            for seat, line in encoded:
                p = procs[seat]
                await p.write(line)
                await p.receive_some()
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        for p in procs:
            await p.aclose()
        nursery.cancel_scope.cancel()
    return elapsed, cpu


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--game", default="back-alley")
    ap.add_argument("--games", type=int, default=9)
    ap.add_argument("--pin", action="store_true", help="run on one core, bots included")
    ap.add_argument("--players", type=int, default=None)
    ap.add_argument("--bot", choices=("python", "c"), default="python",
                    help="the sample random bot to play with: Python (default) or C (the referee's cost shows)")
    ap.add_argument("--sandbox", choices=("auto", "off"), default="auto",
                    help="the referee's bots run sandboxed (auto, the default) or not")
    args = ap.parse_args()
    global BOT
    if args.bot == "c":
        BOT = c_bot()
    options = {"players": args.players} if args.players else {}
    if args.pin:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    from referee.games import get_game

    spec = get_game(args.game)
    opts = spec.normalize_options(options)
    rates: dict[str, list[float]] = {"referee": [], "json": [], "raw": []}
    cpu: dict[str, list[float]] = {"referee": [], "json": [], "raw": []}
    engine_us: list[float] = []  # the engine's own calls per decision: part of any referee's work
    _, steal0 = cpu_ticks()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        limits = Limits(sandbox=args.sandbox, decision_s=10.0)  # enforced, with room for a loaded machine
        await timed_referee(args.game, options, 0, Path(tmp) / "warm-up.jsonl", limits)  # not counted
        for g in range(args.games):
            record = Path(tmp) / f"g{g}.jsonl"
            # The referee, timed from its first request to its last reply.
            decisions, wall, used = await timed_referee(args.game, options, g + 1, record, limits)
            rates["referee"].append(decisions / wall)
            cpu["referee"].append(used / decisions * 1e6)
            # The same game's requests, rebuilt by re-simulating its record, for the baselines.
            requests = rebuild_requests(spec, opts, record)
            engine_us.append(engine_cpu(spec, opts, record) * 1e6)
            n = len(requests)
            for kind in ("json", "raw"):
                wall, used = await pingpong(requests, spec.num_seats(opts), json_lines=kind == "json")
                rates[kind].append(n / wall)
                cpu[kind].append(used / n * 1e6)
            print(f"game {g + 1}: referee {rates['referee'][-1]:6.0f}/s   JSON-lines ping-pong "
                  f"{rates['json'][-1]:6.0f}/s (ratio {rates['referee'][-1] / rates['json'][-1]:.2f})   "
                  f"raw ping-pong {rates['raw'][-1]:6.0f}/s (ratio {rates['referee'][-1] / rates['raw'][-1]:.2f})")
    med = {k: statistics.median(v) for k, v in rates.items()}
    stolen = (cpu_ticks()[1] - steal0) / (time.perf_counter() - t0)
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    paired = {k: sorted(r / b for r, b in zip(rates["referee"], rates[k])) for k in ("json", "raw")}

    def ratios(kind: str) -> str:
        p = paired[kind]
        return (f"ratio {med['referee'] / med[kind]:.2f}; paired median {statistics.median(p):.2f} "
                f"(range {p[0]:.2f}-{p[-1]:.2f})")

    pinned = ", pinned to one core" if args.pin else ""
    print(f"\n{args.game}, {args.bot} bots, sandbox {limits.sandbox}{pinned}, medians of {args.games} games, "
          "decisions per second:")
    print(f"  referee                {med['referee']:8.0f}")
    print(f"  JSON-lines ping-pong   {med['json']:8.0f}   {ratios('json')}  target >= 0.70")
    print(f"  raw-bytes ping-pong    {med['raw']:8.0f}   {ratios('raw')}  stricter")
    print(f"referee process CPU per decision: referee {med_cpu['referee']:.1f} us, JSON-lines ping-pong "
          f"{med_cpu['json']:.1f} us, raw ping-pong {med_cpu['raw']:.1f} us")
    eng = statistics.median(engine_us)
    print(f"ceiling: the engine's calls alone (to_act, legal_actions, decision, observe, apply) {eng:.1f} us "
          f"per decision; JSON-lines ping-pong + engine = {(med_cpu['json'] + eng) / med_cpu['json']:.2f}x the "
          f"ping-pong (target for the referee <= 1.30x; referee now "
          f"{med_cpu['referee'] / med_cpu['json']:.2f}x)")
    print(f"cores' worth of time stolen by the hypervisor during the run: {stolen:.2f}")


def engine_cpu(spec, options, record: Path) -> float:
    """CPU seconds per decision of the engine calls a referee must make, replaying the record's actions."""
    rec = read_record(record)
    actions = [e.action for e in rec.entries if e.record == "decision"]
    best = math.inf
    for _ in range(3):
        state, _ = spec.new_game(rec.header.seed, options)
        t0 = time.process_time()
        for action in actions:
            seat = state.to_act()
            state.legal_actions()
            state.decision()
            state.observe(seat)
            state.apply(action)
        best = min(best, time.process_time() - t0)
    return best / len(actions)


def rebuild_requests(spec, options, record: Path) -> list[tuple[int, dict]]:
    """(seat, request message) of every decision of a recorded game, as the runner sent them."""
    rec = read_record(record)
    state, _ = spec.new_game(rec.header.seed, options)
    out = []
    for e in rec.entries:
        if e.record != "decision":
            continue
        seat = state.to_act()
        line = encode_request(e.n, seat, state.decision(), state.observe(seat), state.legal_actions(), 1000)
        out.append((seat, from_json(line)))
        state.apply(e.action)
    return out


async def timed_referee(game: str, options: dict, seed: int, record: Path,
                        limits: Limits) -> tuple[int, float, float]:
    """A full game through run_match, timed from the first request to the last reply."""
    import referee.match.runner as runner

    marks: list[tuple[float, float]] = []
    original = runner._Match._play

    async def timed_play(self, *args):
        marks.append((time.perf_counter(), time.process_time()))
        try:
            return await original(self, *args)
        finally:
            marks.append((time.perf_counter(), time.process_time()))

    runner._Match._play = timed_play
    try:
        from referee.games import get_game

        spec = get_game(game)
        n = spec.num_seats(spec.normalize_options(options))
        bots = [BotSpec("random", tuple(BOT + [str(seed * 10 + s)])) for s in range(n)]
        result = await run_match(game, options, bots, seed=seed, record_path=record, limits=limits)
    finally:
        runner._Match._play = original
    assert result.fault is None, result.fault
    return result.decisions, marks[1][0] - marks[0][0], marks[1][1] - marks[0][1]


if __name__ == "__main__":
    trio.run(main)
