"""The match values travel between processes as JSON (tournament workers): round trips."""

from __future__ import annotations

from pathlib import Path

from referee.games import Outcome
from referee.match.types import BotSpec, Fault, FaultReason, Limits, MatchResult


def test_bot_spec_and_limits_round_trip():
    spec = BotSpec("x", ("python3", "bot.py", "--seed", "3"), cwd="/tmp")
    assert BotSpec.from_json(spec.to_json()) == spec
    assert BotSpec.from_json(BotSpec("y", ("./bot",)).to_json()) == BotSpec("y", ("./bot",))
    limits = Limits(decision_s=0.25, time_bank_s=3.0, memory_mb=None, cpu_s=7, max_processes=None)
    assert Limits.from_json(limits.to_json()) == limits
    assert Limits.from_json({}) == Limits()


def test_match_result_round_trips_all_but_its_entries():
    fault = Fault(2, FaultReason.ILLEGAL_ACTION, "'XX' is not among the 3 legal actions", ("last", "lines"))
    assert Fault.from_json(fault.to_json()) == fault
    for f, path in ((fault, Path("/r/000001.jsonl")), (None, None)):
        result = MatchResult(
            game="back-alley", seed=12, options={"deals": 3}, seats=[BotSpec("a", ("a",)), BotSpec("b", ("b",))],
            outcome=Outcome("forfeit", (1,), (0, 0), "illegal_action", {"seat": 2, "team": 0}),
            fault=f, decisions=17, duration_s=1.25, record_path=path, entries=[{"record": "event"}],
        )
        back = MatchResult.from_json(result.to_json())
        assert back.entries == []
        back.entries = result.entries
        assert back == result
