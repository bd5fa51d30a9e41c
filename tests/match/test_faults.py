"""The fault matrix: every way a bot misbehaves, with the real subprocess.

For each misbehaving bot (sample_bots/misbehaving/) in a Back Alley game
against random bots, the game ends as a forfeit that names the bot's seat and
a specific reason code; its team loses; the record holds the fault line (with
the bot's last stderr lines) and still verifies; the referee's own memory
stays bounded; and no process the game started survives it.
"""

from __future__ import annotations

import json
import time

import pytest
import trio

from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.verify import verify_record

from .hostile import CASES, PeakRss, assert_no_survivors, marked_processes, pids_in, random_bot

REFEREE_PEAK_MB = 200  # the referee (this test process) never gets near a bot's excesses
REFEREE_GROWTH_MB = 64


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_a_misbehaving_bot_forfeits_with_its_seat_and_reason_and_leaves_nothing_behind(
    case, tmp_path, monkeypatch
):
    seat = CASES.index(case) % 4  # every seat gets its turn across the matrix
    bots = [random_bot(100 + s) for s in range(4)]
    bots[seat] = case.spec()
    limits = case.with_limits()
    record = tmp_path / "game.jsonl"
    rss = PeakRss()
    with marked_processes(monkeypatch) as token:
        started = time.monotonic()
        async with trio.open_nursery() as nursery:
            await nursery.start(rss.run)
            result = await run_match("back-alley", {}, bots, seed=7, record_path=record, limits=limits,
                                     stderr_dir=tmp_path / "stderr")
            nursery.cancel_scope.cancel()
        elapsed = time.monotonic() - started
        assert_no_survivors(token, pids_in(result.fault.stderr_tail if result.fault else (), result.sandbox))

    # The outcome names the seat and the reason; the offending team loses.
    outcome = result.outcome
    assert outcome.status == "forfeit", outcome
    assert outcome.reason == case.reason.value, (outcome.reason, outcome.detail)
    assert outcome.detail["seat"] == seat and outcome.detail["team"] == seat % 2
    assert outcome.winners == (1 - seat % 2,)
    fault = result.fault
    assert fault is not None and fault.seat == seat and fault.reason is case.reason
    assert case.message in fault.message, fault.message
    assert any(case.says in line for line in fault.stderr_tail), fault.stderr_tail

    # The record holds exactly that fault and result, and verifies.
    rec = read_record(record)
    assert not rec.truncated and rec.result is not None
    faults = [e.model_dump(exclude_none=True) for e in rec.entries if e.record == "fault"]
    assert faults == [{"record": "fault", **json.loads(json.dumps(fault.to_json()))}]
    assert rec.result.outcome.model_dump() == json.loads(json.dumps(outcome.to_json()))
    assert verify_record(rec).ok
    own = [e for e in rec.entries if e.record == "decision" and e.seat == seat]
    assert len(own) == case.legal_decisions, "misbehaved at the wrong moment"
    if case.legal_decisions == 0:
        assert not any(e.record == "ready" for e in rec.entries)

    # The referee stayed small and quick whatever the bot did.
    assert rss.peak_mb < REFEREE_PEAK_MB and rss.growth_mb < REFEREE_GROWTH_MB, (rss.peak_mb, rss.growth_mb)
    assert elapsed < limits.handshake_s + limits.decision_s + 5, elapsed

    # The bot's stderr file is capped; the rest was dropped, not buffered.
    (log,) = (tmp_path / "stderr").glob(f"seat{seat}-*.log")
    notice = 100
    assert log.stat().st_size <= limits.stderr_keep_bytes + notice
    if case.bot == "flood_stderr":
        assert log.stat().st_size > limits.stderr_keep_bytes
        assert "more bytes of stderr dropped" in log.read_text()[-notice:]


def test_every_reason_code_is_documented_and_exercised_by_a_misbehaving_bot():
    from pathlib import Path

    from referee.match.types import FaultReason

    doc = (Path(__file__).resolve().parents[2] / "docs" / "misbehaving.md").read_text()
    missing = [r.value for r in FaultReason if f"| `{r.value}` |" not in doc]
    assert not missing, f"docs/misbehaving.md lacks {missing}"
    # The matrix covers all but two, which test_fault_paths.py covers: spawn_failed needs no bot, and
    # game traffic rarely fills a pipe, so not_reading is provoked on one BotProcess.
    assert {c.reason for c in CASES} | {FaultReason.SPAWN_FAILED, FaultReason.NOT_READING} == set(FaultReason)
