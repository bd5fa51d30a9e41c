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
The third, the floor, plays the very same game (same seed, same bots and bot
seeds, so the same decisions; checked against the referee's record) with a
minimal hand-written Trio loop doing only what any referee must per decision
(``floor``): its CPU per decision over the ping-pong's is the least any
Python referee doing that work can reach, and the output says when even that
is above the target.  Its bots run as the ping-pong's do, unsandboxed and
without a watchdog (``BareBot``): the sandbox and the watchdog could only add
to it, so it stays a lower bound.
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


class BareBot(BotProcess):
    """A bot process for the baselines: the runner's own pipe primitives, no watchdog.

    A bare loop polices nothing.  ``BotProcess``'s watchdog, for a bot started
    unsandboxed as these are, finds its family in a scan of all of ``/proc``
    (in a worker thread, so in this process's CPU time) about ten times a
    second: several milliseconds a scan on a machine with a few dozen
    processes, a few microseconds per decision that grow with the number of
    processes on the machine.  Counted in the baselines, it made them dearer
    than a bare loop and so the referee's ratios look better than they are;
    the referee keeps its own watchdog (its bots are sandboxed and scanned on
    their own, limits enforced)."""

    async def _watch(self) -> None:
        return None


async def pingpong(requests: list[tuple[int, dict]], seats: int, *, json_lines: bool) -> tuple[float, float]:
    """Send the same requests to the same bots and read each reply: nothing else.

    With ``json_lines`` each request is encoded when sent and each reply
    decoded; without, pre-encoded bytes go out and replies stay bytes.  Both
    use the runner's own pipe primitives (``BotProcess.write`` and
    ``receive_some``; a reply line comes in one read), so the ratio measures
    the referee's own work."""
    limits = Limits()
    procs = [BareBot(s, BotSpec("random", tuple(BOT + [str(s)])), limits, None) for s in range(seats)]
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


async def floor(spec, options: dict, seed: int, record: Path, limits: Limits) -> tuple[int, float, float]:
    """The same game played by a minimal hand-written Trio loop: the floor of any referee.

    Same seed, same bot commands and seeds as ``timed_referee``, so the same
    decisions.  Per decision it does only what any referee must: the engine's
    calls (to_act, legal_actions, decision, observe, apply), the request
    encoded with its observation, the reply read to its newline and decoded,
    its id and action checked against the legal list, a deadline, and the
    record lines of the decision and its events encoded and handed to a
    buffered file in one write.  No protocol machine, no channels, no
    bookkeeping beyond that.  The pipe primitives are the ping-pong's own
    (``BotProcess.write`` and ``receive_some``), so floor minus ping-pong is
    that work alone.  Returns (decisions, wall s, CPU s) from the first
    request to the last reply, like ``timed_referee``.  The record's decision
    and event lines are the referee's (``same_play`` checks)."""
    from protocol.codec import encode_hello
    from referee.match.runner import DEADLINE_SLACK_S, hello_for

    n = spec.num_seats(options)
    procs = [BareBot(s, BotSpec("random", tuple(BOT + [str(seed * 10 + s)])), Limits(), None) for s in range(n)]
    allowed = limits.decision_s + limits.time_bank_s
    time_ms = int(allowed * 1000)
    state, events = spec.new_game(seed, options)
    out = open(record, "wb")  # noqa: SIM115  (closed below; buffered, as the referee's)
    async with trio.open_nursery() as nursery:
        wants = []
        for s, p in enumerate(procs):
            await p.start(nursery)
            await p.write(encode_hello(hello_for(spec, options, s, limits)))
            wants.append(from_json(await p.receive_some())["events"])
        assert not any(wants), "the floor sends no events: the sample bots ask for none"
        now = trio.lowlevel.current_clock().current_time
        decisions = 0
        with trio.CancelScope() as scope:
            t0, c0 = time.perf_counter(), time.process_time()
            while (seat := state.to_act()) is not None:
                lines = [to_json({"record": "event", "event": e.data, "to": None if e.to is None else list(e.to)})
                         for e in events]
                legal = state.legal_actions()
                decision = state.decision()
                decisions += 1
                p = procs[seat]
                start = now()
                due = start + allowed  # moved only when not just past it: the referee's own economy
                if not due <= scope.deadline <= due + DEADLINE_SLACK_S:
                    scope.deadline = due + DEADLINE_SLACK_S
                await p.write(to_json({"type": "request", "id": decisions, "seat": seat, "decision": decision,
                                       "state": state.observe(seat), "legal": legal, "time_ms": time_ms}) + b"\n")
                reply = await p.receive_some()
                while not reply.endswith(b"\n"):
                    reply += await p.receive_some()
                took = now() - start
                msg = from_json(reply)
                action = msg["action"]
                if msg["id"] != decisions or action not in legal or took > allowed:
                    raise AssertionError(f"seat {seat} answered {reply!r} after {took:.3f}s")
                lines.append(to_json({"record": "decision", "n": decisions, "seat": seat, "decision": decision,
                                      "legal": legal, "action": action, "ms": round(took * 1000, 3)}))
                lines.append(b"")
                out.write(b"\n".join(lines))
                events = state.apply(action)
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        assert not scope.cancelled_caught, "a bot overran its decision time in the floor"
        out.write(b"".join(to_json({"record": "event", "event": e.data, "to": None if e.to is None else list(e.to)})
                           + b"\n" for e in events))
        out.close()
        for p in procs:
            await p.aclose()
        nursery.cancel_scope.cancel()
    return decisions, elapsed, cpu


def same_play(referee_record: Path, floor_record: Path) -> None:
    """The floor's decision and event lines are the referee's, but for the time taken."""
    def play(path: Path) -> list[dict]:
        out = []
        for line in path.read_bytes().splitlines():
            entry = from_json(line)
            if entry["record"] in ("event", "decision"):
                entry.pop("ms", None)
                out.append(entry)
        return out

    if play(referee_record) != play(floor_record):
        raise AssertionError(f"the floor played another game than the referee ({floor_record})")


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
    rates: dict[str, list[float]] = {"referee": [], "json": [], "raw": [], "floor": []}
    cpu: dict[str, list[float]] = {"referee": [], "json": [], "raw": [], "floor": []}
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
            # The floor: the same game by a minimal loop doing only the work any referee must.
            floor_record = Path(tmp) / f"floor{g}.jsonl"
            decisions, wall, used = await floor(spec, opts, g + 1, floor_record, limits)
            same_play(record, floor_record)
            rates["floor"].append(decisions / wall)
            cpu["floor"].append(used / decisions * 1e6)
            print(f"game {g + 1}: referee {rates['referee'][-1]:6.0f}/s   JSON-lines ping-pong "
                  f"{rates['json'][-1]:6.0f}/s (ratio {rates['referee'][-1] / rates['json'][-1]:.2f})   "
                  f"raw ping-pong {rates['raw'][-1]:6.0f}/s (ratio {rates['referee'][-1] / rates['raw'][-1]:.2f})")
    med = {k: statistics.median(v) for k, v in rates.items()}
    stolen = (cpu_ticks()[1] - steal0) / (time.perf_counter() - t0)
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    paired = {k: sorted(r / b for r, b in zip(rates["referee"], rates[k], strict=True)) for k in ("json", "raw")}

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
    floor_x = med_cpu["floor"] / med_cpu["json"]
    paired_floor = sorted(f / j for f, j in zip(cpu["floor"], cpu["json"], strict=True))
    floor_paired = statistics.median(paired_floor)
    print(f"floor: a minimal hand-written Trio loop playing the same games (engine calls, request with its "
          f"observation encoded, reply decoded and checked against the legal list, a deadline, record lines "
          f"written) {med_cpu['floor']:.1f} us per decision = {floor_x:.2f}x the JSON-lines ping-pong (paired "
          f"median {floor_paired:.2f}, range {paired_floor[0]:.2f}-{paired_floor[-1]:.2f}); referee "
          f"{med_cpu['referee'] / med_cpu['floor']:.2f}x the floor")
    if floor_x > 1.30 and floor_paired > 1.30:
        print(f"  the floor is above the 1.30x target: the target is out of reach for any Python referee doing "
              f"the required work in {args.game}")
    else:
        print(f"  the floor is not clearly above the 1.30x target in {args.game}: only the referee's own work over "
              f"the floor ({med_cpu['referee'] / med_cpu['floor']:.2f}x) stands between it and the target")
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
