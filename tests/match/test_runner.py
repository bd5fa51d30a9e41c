"""The match runner with real bot subprocesses: the normal paths.

Fault paths (every way a bot can misbehave) live in test_faults*.py.
"""

from __future__ import annotations

import json

from referee.games import GAMES
from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.types import Limits
from referee.match.verify import verify_record

from ..conftest import PATIENT
from .conftest import listener, listener_log, random_bot


async def test_a_full_back_alley_game_is_played_recorded_and_verifies(tmp_path, seeded_random_bots):
    path = tmp_path / "game.jsonl"
    result = await run_match("back-alley", {}, seeded_random_bots, seed=11, record_path=path,
                             stderr_dir=tmp_path / "err", limits=PATIENT)
    assert result.fault is None
    assert result.outcome.status in ("win", "draw")
    rec = read_record(path)
    assert not rec.truncated and rec.result is not None
    h = rec.header
    assert h.game == "back-alley" and h.seed == 11 and h.rules_version == GAMES["back-alley"].rules_version
    assert [s.team for s in h.seats] == [0, 1, 0, 1]
    assert h.seats[0].command[-1] == "100"
    decisions = [e for e in rec.entries if e.record == "decision"]
    assert len(decisions) == result.decisions == rec.result.decisions
    assert all(d.action in d.legal and d.ms >= 0 for d in decisions)
    deals = [e for e in rec.entries if e.record == "event" and e.event["type"] == "deal"]
    assert len(deals) >= 25
    hands = [e for e in rec.entries if e.record == "event" and e.event["type"] == "hand"]
    assert hands and all(e.to == [e.event["seat"]] for e in hands)
    assert rec.result.outcome.model_dump() == result.outcome.to_json()
    assert verify_record(rec).ok
    assert sorted(p.name for p in (tmp_path / "err").iterdir()) == [f"seat{s}-random.log" for s in range(4)]


def _stable(path):
    """Record lines without wall-clock fields."""
    out = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        for key in ("ms", "started_at", "duration_s"):
            entry.pop(key, None)
        out.append(entry)
    return out


async def test_same_seed_and_same_bot_decisions_give_the_same_record(tmp_path, seeded_random_bots):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    await run_match("back-alley", {}, seeded_random_bots, seed=3, record_path=a, limits=PATIENT)
    await run_match("back-alley", {}, seeded_random_bots, seed=3, record_path=b, limits=PATIENT)
    assert _stable(a) == _stable(b)
    c = tmp_path / "c.jsonl"
    await run_match("back-alley", {}, seeded_random_bots, seed=4, record_path=c, limits=PATIENT)
    assert _stable(c) != _stable(a)


async def test_a_bot_that_asks_for_events_gets_hello_its_own_hand_and_game_over(tmp_path):
    bots = [listener() for s in range(4)]
    stderr = tmp_path / "stderr"
    result = await run_match("back-alley", {}, bots, seed=2, record_path=tmp_path / "r.jsonl", stderr_dir=stderr,
                             limits=Limits(stderr_keep_bytes=64 << 20))
    assert result.fault is None
    for seat in range(4):
        msgs = [json.loads(line) for line in listener_log(stderr, seat)]
        hello = msgs[0]
        assert hello["type"] == "hello" and hello["seat"] == seat and hello["team"] == seat % 2
        assert hello["teams"] == [[0, 2], [1, 3]] and hello["seats"] == 4 and hello["protocol"] == 2
        assert hello["limits"]["decision_ms"] == 1000
        hands = [m["event"] for m in msgs if m["type"] == "event" and m["event"]["type"] == "hand"]
        assert hands and all(h["seat"] == seat for h in hands), "a bot saw another seat's hand"
        requests = [m for m in msgs if m["type"] == "request"]
        assert requests and all(r["seat"] == seat and r["legal"] for r in requests)
        assert [r["id"] for r in requests] == sorted(r["id"] for r in requests)
        assert msgs[-1]["type"] == "game_over"
        expected = {"aborted": "aborted", "draw": "draw"}.get(
            result.outcome.status, "win" if seat % 2 in result.outcome.winners else "loss")
        assert msgs[-1]["result"] == expected
    assert result.outcome.status != "aborted" and result.decisions > 100


async def test_the_time_bank_covers_slow_decisions_until_it_runs_out(tmp_path):
    slow = listener(slow_n=3, slow_s=0.25)
    others = [random_bot(seed=s) for s in range(3)]
    limits = Limits(decision_s=0.15, time_bank_s=1.0)
    result = await run_match("back-alley", {}, [slow] + others, seed=1, limits=limits)
    assert result.fault is None, result.fault
    limits = Limits(decision_s=0.15, time_bank_s=0.0)
    result = await run_match("back-alley", {}, [slow] + others, seed=1, limits=limits)
    assert result.outcome.status == "forfeit"
    assert result.fault.seat == 0 and result.fault.reason.value == "timeout"
    assert result.outcome.winners == (1,)


async def test_a_reply_after_the_limit_is_a_timeout_even_before_the_deadline_fires(tmp_path, monkeypatch):
    """The runner's deadline may lie up to DEADLINE_SLACK_S past the limit (it is
    moved lazily); a reply in that gap still counts as too late.  A huge slack
    makes the gap wide enough to land in on purpose."""
    from referee.match import runner

    monkeypatch.setattr(runner, "DEADLINE_SLACK_S", 5.0)
    slow = listener(slow_n=1, slow_s=0.4)
    others = [random_bot(seed=s) for s in range(3)]
    result = await run_match("back-alley", {}, [slow] + others, seed=1, limits=Limits(decision_s=0.15))
    assert result.outcome.status == "forfeit"
    assert result.fault.seat == 0 and result.fault.reason.value == "timeout"
    assert "within 0.150s" in result.fault.message
    assert result.decisions < 5  # the first (slow) answer was refused, not taken


async def test_every_game_plays_to_the_end_with_random_bots(tmp_path):
    for name in sorted(GAMES):
        spec = GAMES[name]
        opts = spec.normalize_options({})
        bots = [random_bot(seed=s) for s in range(spec.num_seats(opts))]
        path = tmp_path / f"{name}.jsonl"
        result = await run_match(name, opts, bots, seed=8, record_path=path, limits=PATIENT)
        assert result.fault is None, (name, result.fault)
        assert verify_record(read_record(path)).ok, name


async def test_the_record_on_disk_keeps_up_while_a_bot_thinks(tmp_path):
    """Flushed every RECORD_FLUSH_S, not only at the end: a record read while the
    game waits on a hanging bot already holds every decision made before it."""
    import sys
    from pathlib import Path

    import trio

    from referee.match.types import BotSpec

    hang = BotSpec("hang", (sys.executable, str(Path(__file__).resolve().parents[2] / "sample_bots" / "misbehaving"
                                                / "hang.py"), "--after", "30"))
    bots = [hang] + [random_bot(s) for s in range(1, 4)]
    path = tmp_path / "game.jsonl"

    def answered_by_seat0() -> int:
        if not path.exists():
            return 0
        return sum(1 for e in read_record(path).entries if e.record == "decision" and e.seat == 0)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_match("back-alley", {}, bots, seed=2, record_path=path,
                                             limits=Limits(decision_s=8.0, grace_s=0.1, term_s=0.1)))
        with trio.move_on_after(6):  # well inside the 8 s the hanging bot is given
            while answered_by_seat0() < 30:
                await trio.sleep(0.05)
        assert answered_by_seat0() == 30, "the decisions before the hang are not on disk"
        rec = read_record(path)
        assert rec.result is None  # the game is still waiting on the bot
        nursery.cancel_scope.cancel()


async def test_the_result_carries_each_seats_decision_times(tmp_path):
    slow = listener(slow_n=2, slow_s=0.2)
    others = [random_bot(seed=s) for s in range(3)]
    result = await run_match("back-alley", {}, [slow] + others, seed=1, limits=Limits(decision_s=5.0))
    assert result.fault is None, result.fault
    assert len(result.decision_ms) == 4
    assert sum(count for count, _, _ in result.decision_ms) == result.decisions
    count, total, longest = result.decision_ms[0]
    assert longest >= 200 and total >= 400  # its two slow replies
    # That the quick seats are not charged the slow one's time is checked exactly on Trio's mock clock
    # (test_runner_timing.py): with real processes their times grow with the machine's load.
    assert all(count > 0 and longest <= total for count, total, longest in result.decision_ms)
    again = type(result).from_json(result.to_json())
    assert again.decision_ms == result.decision_ms
