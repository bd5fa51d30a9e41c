"""docs/protocol.md: a bot's lines may end in CRLF; the game is played as with LF."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits

CRLF_BOT = Path(__file__).resolve().parent / "crlf_bot.py"


def test_a_bot_whose_lines_end_in_crlf_plays_a_whole_game(tmp_path):
    bots = [BotSpec("crlf", (sys.executable, str(CRLF_BOT))) for _ in range(4)]
    result = trio.run(lambda: run_match("pegs-and-jokers", {"players": 4, "max_turns": 120}, bots, seed=2,
                                        record_path=tmp_path / "game.jsonl",
                                        limits=Limits(decision_s=10, handshake_s=20)))
    assert result.fault is None, result.fault
    assert result.outcome.status in ("win", "draw") and result.decisions == 120
    assert result.names == ["crlf"] * 4
