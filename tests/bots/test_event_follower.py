"""One bot that knows no game and follows only the shared events plays all three games.

``sample_bots/event_follower.py`` keeps its hand from ``hand``, ``drawn`` and the
events that name its seat and a ``card``, and checks it against the state of
every request; it exits (a crash fault) at the first difference.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits

ROOT = Path(__file__).resolve().parents[2]
FOLLOWER = ROOT / "sample_bots" / "event_follower.py"


@pytest.mark.parametrize(("game", "options", "seed"), [
    ("back-alley", {}, 21),  # seed 21 has a joker draw (BA-3.2)
    ("schmier", {"max_deals": 4}, 3),
    ("pegs-and-jokers", {"players": 4, "max_turns": 200}, 4),
])
def test_the_event_follower_plays_every_game_and_its_hand_always_matches(game, options, seed, tmp_path):
    from referee.games import GAMES

    seats = GAMES[game].num_seats(GAMES[game].normalize_options(options))
    bots = [BotSpec("follower", (sys.executable, str(FOLLOWER))) for _ in range(seats)]
    stderr = tmp_path / "stderr"
    result = trio.run(lambda: run_match(game, options, bots, seed=seed, record_path=tmp_path / "game.jsonl",
                                        stderr_dir=stderr, limits=Limits(decision_s=10, handshake_s=20)))
    assert result.fault is None, (result.fault, result.fault and result.fault.stderr_tail)
    total_checked = 0
    for s in range(seats):
        text = (stderr / f"seat{s}-follower.log").read_text()
        summary = [ln for ln in text.splitlines() if ln.startswith("event-follower: ok: ")]
        assert len(summary) == 1, text
        checked = int(summary[0].split("hand checked at ")[1].split()[0])
        assert checked > 0
        total_checked += checked
        assert " game_over=1" in summary[0] and " hand=" in summary[0]
        if game != "back-alley":  # every Schmier deal and every Pegs and Jokers turn draws
            assert " drawn=" in summary[0] and " draw=" in summary[0]
    assert total_checked == result.decisions


def run_follower(lines: list[dict]) -> subprocess.CompletedProcess:
    text = "".join(json.dumps(m) + "\n" for m in lines)
    return subprocess.run([sys.executable, str(FOLLOWER)], input=text, capture_output=True, text=True,
                          cwd=ROOT, timeout=30)


HELLO = {"type": "hello", "protocol": 1, "game": "pegs-and-jokers", "rules_version": "2", "options": {},
         "seat": 1, "team": 1, "seats": 4, "teams": [[0, 2], [1, 3]],
         "limits": {"handshake_ms": 1000, "decision_ms": 1000, "time_bank_ms": 0}}


def event(**data):
    return {"type": "event", "event": data}


def request(hand):
    return {"type": "request", "id": 1, "seat": 1, "decision": "move", "state": {"hand": hand},
            "legal": ["discard 5C"], "time_ms": 1000}


def test_the_follower_catches_a_hand_the_events_do_not_explain():
    """The check is real: a drawn card missing from the events, or a private draw without
    its public one, stops the bot with a message."""
    base = [HELLO, event(type="hand", seat=1, cards=["5C", "2D"])]
    ok = run_follower([*base, event(type="draw", seat=1, count=1), event(type="drawn", seat=1, cards=["KS"]),
                       request(["2D", "5C", "KS"])])
    assert ok.returncode == 0 and json.loads(ok.stdout.splitlines()[-1])["action"] == "discard 5C", ok.stderr
    missing = run_follower([*base, event(type="draw", seat=1, count=1), request(["2D", "5C", "KS"])])
    assert missing.returncode == 3 and "my hand from the events is ['2D', '5C']" in missing.stderr
    unannounced = run_follower([*base, event(type="drawn", seat=1, cards=["KS"]), request(["2D", "5C", "KS"])])
    assert unannounced.returncode == 3 and "does not follow its public draw" in unannounced.stderr
    played = run_follower([*base, event(type="move", seat=1, card="5C"), request(["2D"])])
    assert played.returncode == 0, played.stderr
