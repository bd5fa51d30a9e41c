"""Each misbehaving bot in a real tournament: every other game completes and
the standings report the bot's forfeits under the right reason.

Pegs and Jokers (4 players, 40 turns) keeps the games short; three entrants
(two random bots and the misbehaving one) give six games, four of them with
the misbehaving bot and two without.
"""

from __future__ import annotations

import sys

import pytest
import trio

from tournaments.config import parse, resolve
from tournaments.runner import run_tournament

from .hostile import CASES, FAST, MISBEHAVING, RANDOM_BOT, PeakRss, assert_no_survivors, marked_processes

RANDOM = f"{sys.executable} {RANDOM_BOT}"


#: The innocent bots' limits: generous, so a loaded machine (the suite runs in parallel) never
#: times one of them out; the misbehaving bot has the case's own (per-entrant limits), so what
#: it does is caught as quickly as in a game of its own.
INNOCENT = {"handshake_s": 60.0, "decision_s": 10.0}


def tournament(case, out):
    bad_limits = {"handshake_s": FAST.handshake_s, "decision_s": FAST.decision_s, **case.limits}
    data = {
        "game": "pegs-and-jokers", "options": {"players": 4, "max_turns": 40}, "seed": 5,
        "games_per_pairing": 1, "jobs": 3, "output": str(out),
        "limits": {**bad_limits, **INNOCENT},
        "entrants": [
            {"name": "rnd1", "command": RANDOM, "args": ["{seed}"]},
            {"name": "rnd2", "command": RANDOM, "args": ["{seed}"]},
            {"name": "bad", "command": f"{sys.executable} {MISBEHAVING / (case.bot + '.py')}",
             "args": list(case.args), "limits": bad_limits},
        ],
    }
    return resolve(parse(data), MISBEHAVING)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_a_tournament_with_a_misbehaving_bot_completes_and_reports_its_forfeits(case, tmp_path, monkeypatch):
    t = tournament(case, tmp_path / "out")
    rss = PeakRss()
    with marked_processes(monkeypatch) as token:
        async with trio.open_nursery() as nursery:
            await nursery.start(rss.run)
            run = await run_tournament(t)
            nursery.cancel_scope.cancel()
        assert_no_survivors(token)

    assert run.played == t.total_games() == 6 and len(run.results) == 6
    with_bad = [r for r in run.results.values() if "bad" in r.teams]
    without = [r for r in run.results.values() if "bad" not in r.teams]
    assert len(with_bad) == 4 and len(without) == 2
    for r in without:  # the other games are played to their end
        assert r.fault is None and r.status != "forfeit" and r.decisions >= 40
    for r in with_bad:
        assert r.status == "forfeit" and r.fault is not None
        assert r.fault.entrant == "bad" and r.fault.reason == case.reason.value, r.fault
        assert r.teams[r.fault.team] == "bad" and r.winners == (1 - r.fault.team,)
    rows = {row["name"]: row for row in run.standings.to_json()["entrants"]}
    assert rows["bad"]["forfeits_by_reason"] == {case.reason.value: 4}
    assert rows["bad"]["losses"] == 4 and rows["bad"]["games"] == 4
    assert rows["rnd1"]["forfeits"] == rows["rnd2"]["forfeits"] == 0
    assert rows["rnd1"]["opponent_forfeits"] == rows["rnd2"]["opponent_forfeits"] == 2
    assert rss.peak_mb < 250 and rss.growth_mb < 96, (rss.peak_mb, rss.growth_mb)
