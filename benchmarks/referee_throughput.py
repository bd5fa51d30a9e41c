"""Referee decisions per second against a bare Trio JSON-lines ping-pong.

Both sides use the same four `sample_bots/random_bot.py` processes and the
same request lines: the baseline replays the exact request bytes a real game
sent (same sizes, same legal lists) and reads each reply, doing nothing else.
The referee figure is a full game through `run_match` (engine, observation,
encoding, decoding, legality check, record written to a file).  Bot start-up
is excluded from both.  Target: referee >= 70 % of the baseline rate.

Usage: python benchmarks/referee_throughput.py [--game back-alley] [--games 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.codec import encode_request  # noqa: E402
from referee.match.bot import BotProcess  # noqa: E402
from referee.match.record import read_record  # noqa: E402
from referee.match.runner import run_match  # noqa: E402
from referee.match.types import BotSpec, Limits  # noqa: E402

BOT = [sys.executable, str(ROOT / "sample_bots" / "random_bot.py")]


async def referee_game(game: str, options: dict, seed: int, record: Path) -> tuple[int, float]:
    from referee.games import get_game

    spec = get_game(game)
    n = spec.num_seats(spec.normalize_options(options))
    bots = [BotSpec("random", tuple(BOT + [str(seed * 10 + s)])) for s in range(n)]
    result = await run_match(game, options, bots, seed=seed, record_path=record)
    assert result.fault is None, result.fault
    rec = read_record(record)
    # Time the decision loop only: from the first to the last decision's reply.
    ms = sum(e["ms"] for e in rec.entries if e["record"] == "decision")
    return result.decisions, result.duration_s, ms / 1000


async def pingpong(requests: list[tuple[int, bytes]], seats: int) -> tuple[float, float]:
    """Send the same request lines to the same bots and read each reply: nothing else.

    It uses the same pipe primitives as the runner (``BotProcess.write`` and
    ``receive_line``), so the ratio measures the referee's own work per decision."""
    limits = Limits()
    procs = [BotProcess(s, BotSpec("random", tuple(BOT + [str(s)])), limits, None) for s in range(seats)]
    async with trio.open_nursery() as nursery:
        for p in procs:
            await p.start(nursery)
            await p.send(b'{"type":"hello"}\n', 5)
            await p.receive_line()
        t0, c0 = time.perf_counter(), time.process_time()
        for seat, line in requests:
            p = procs[seat]
            await p.write(line)
            await p.receive_line()
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        for p in procs:
            await p.aclose()
        nursery.cancel_scope.cancel()
    return elapsed, cpu


def requests_from_record(path: Path) -> list[tuple[int, bytes]]:
    rec = read_record(path)
    out = []
    for e in rec.entries:
        if e["record"] == "decision":
            # Same size as the real request: the state is the bulk of it.
            out.append((e["seat"], e))
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--game", default="back-alley")
    ap.add_argument("--games", type=int, default=5)
    ap.add_argument("--players", type=int, default=None)
    args = ap.parse_args()
    options = {"players": args.players} if args.players else {}
    from referee.games import get_game

    spec = get_game(args.game)
    opts = spec.normalize_options(options)
    ref_rates, base_rates, ref_cpu, base_cpu = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for g in range(args.games):
            record = Path(tmp) / f"g{g}.jsonl"
            t0 = time.perf_counter()
            n, duration, _ = await referee_game(args.game, options, seed=g + 1, record=record)
            # Rebuild the exact request lines of that game by re-simulating it.
            lines = rebuild_requests(spec, opts, record)
            base, base_c = await pingpong(lines, spec.num_seats(opts))
            # Referee time excluding start-up: measure a second identical-size game loop
            t_ref = await timed_referee(args.game, options, g + 1, Path(tmp) / f"t{g}.jsonl")
            ref_rates.append(t_ref[0] / t_ref[1])
            base_rates.append(len(lines) / base)
            ref_cpu.append(t_ref[2] / t_ref[0] * 1e6)
            base_cpu.append(base_c / len(lines) * 1e6)
            print(f"game {g + 1}: referee {ref_rates[-1]:8.0f} decisions/s   "
                  f"ping-pong baseline {base_rates[-1]:8.0f} decisions/s   "
                  f"ratio {ref_rates[-1] / base_rates[-1]:.2f}   referee CPU {ref_cpu[-1]:5.1f} vs "
                  f"{base_cpu[-1]:5.1f} us/decision")
    r, b = statistics.median(ref_rates), statistics.median(base_rates)
    print(f"\n{args.game}: median referee {r:.0f} decisions/s, baseline {b:.0f} decisions/s, "
          f"ratio {r / b:.2f} (target >= 0.70)")
    rc, bc = statistics.median(ref_cpu), statistics.median(base_cpu)
    print(f"referee process CPU per decision: referee {rc:.1f} us, ping-pong {bc:.1f} us, "
          f"the referee's own work {rc - bc:.1f} us (CPU time is steadier than rates on a busy machine)")


def rebuild_requests(spec, options, record: Path) -> list[tuple[int, bytes]]:
    rec = read_record(record)
    state, _ = spec.new_game(rec.header["seed"], options)
    out = []
    for e in rec.entries:
        if e["record"] != "decision":
            continue
        seat = state.to_act()
        out.append((seat, encode_request(e["n"], seat, state.decision(), state.observe(seat),
                                         state.legal_actions(), 1000)))
        state.apply(e["action"])
    return out


async def timed_referee(game: str, options: dict, seed: int, record: Path) -> tuple[int, float, float]:
    """A full game through run_match, timed from the first request to the last reply."""
    import referee.match.runner as runner

    marks: list[tuple[float, float]] = []
    original = runner._Match._play

    async def timed_play(self, procs, state, events):
        marks.append((time.perf_counter(), time.process_time()))
        try:
            return await original(self, procs, state, events)
        finally:
            marks.append((time.perf_counter(), time.process_time()))

    runner._Match._play = timed_play
    try:
        from referee.games import get_game

        spec = get_game(game)
        n = spec.num_seats(spec.normalize_options(options))
        bots = [BotSpec("random", tuple(BOT + [str(seed * 10 + s)])) for s in range(n)]
        result = await run_match(game, options, bots, seed=seed, record_path=record)
    finally:
        runner._Match._play = original
    return result.decisions, marks[1][0] - marks[0][0], marks[1][1] - marks[0][1]


if __name__ == "__main__":
    trio.run(main)
