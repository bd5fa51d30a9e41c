"""The starter bots in JavaScript, C and Python (via protocol.bot) play real games.

Each game runs through the referee (``run_match``: processes, pipes, limits),
every seat played by the bot under test with its own seed; the record must
show no fault and re-simulate exactly through the engine.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from referee.match.record import read_record
from referee.match.runner import run_match
from referee.match.types import BotSpec
from referee.match.verify import verify_record

from ..conftest import PATIENT
from .conftest import BOTS, GAMES, python_bot

# Random Schmier games can last thousands of deals; a few dozen show the same.
SHORT = {"schmier": {"max_deals": 25}}


async def play_all_seats(game: str, bot, tmp_path):
    options, seats = GAMES[game]
    options = {**options, **SHORT.get(game, {})}
    bots = [bot(seat) for seat in range(seats)]
    record = tmp_path / f"{game}.jsonl"
    result = await run_match(game, options, bots, seed=11, record_path=record, limits=PATIENT)
    assert result.fault is None, result.fault
    assert result.outcome.status in ("win", "draw", "aborted")
    assert result.decisions > 0
    check = verify_record(read_record(record))
    assert check.ok, check.message
    return result


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_the_javascript_bot_plays_a_whole_game(game, node, tmp_path):
    script = str(BOTS / "js" / "random_bot.js")
    result = await play_all_seats(
        game, lambda seat: BotSpec(name="js", command=(node, script, str(seat + 1))), tmp_path)
    assert {s.name for s in result.seats} == {"js"}


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_the_c_bot_plays_a_whole_game(game, c_random_bot, tmp_path):
    await play_all_seats(
        game, lambda seat: BotSpec(name="c", command=(str(c_random_bot), str(seat + 1))), tmp_path)


@pytest.mark.parametrize("game", sorted(GAMES))
async def test_the_python_helper_random_bot_plays_a_whole_game(game, tmp_path):
    await play_all_seats(
        game, lambda seat: python_bot(BOTS / "python_random_bot.py", str(seat + 1)), tmp_path)


# -- the JSON reading of the starter bots, on lines a real game does not produce ------

HELLO = {"type": "hello", "protocol": 1, "game": "back-alley", "rules_version": "1", "options": {},
         "seat": 0, "team": 0, "seats": 4, "teams": [[0, 2], [1, 3]],
         "limits": {"handshake_ms": 1000, "decision_ms": 1000, "time_bank_ms": 0}}
# Keys in an unusual order, strings holding quotes, backslashes, braces and
# brackets, a nested state with a "legal" key of its own, unicode.
TRICKY_REQUEST = (
    '{"state": {"legal": ["no"], "note": "a \\"quoted\\" } ] , \\\\ word", "n": [1, {"x": "]"}]},'
    ' "type" : "request", "seat": 0, "decision": "play", "time_ms": 1000,'
    ' "legal": ["say \\"hi\\"", "back\\\\slash", "caf\\u00e9 ü"], "id": 42}'
)
EVENT = {"type": "event", "event": {"type": "play", "seat": 1, "card": "AS"}}
GAME_OVER = {"type": "game_over", "outcome": {"status": "draw"}, "result": "draw"}


def talk(argv: list[str], seed: int) -> list[dict]:
    lines = [json.dumps(HELLO), json.dumps(EVENT), TRICKY_REQUEST, json.dumps(GAME_OVER)]
    proc = subprocess.run([*argv, str(seed)], input="\n".join(lines) + "\n", capture_output=True,
                          text=True, timeout=20, encoding="utf-8")
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def check_replies(replies: list[dict]) -> set[str]:
    ready, action = replies
    assert ready["type"] == "ready" and ready["events"] is False and ready["name"]
    assert action["type"] == "action" and action["id"] == 42
    legal = json.loads(TRICKY_REQUEST)["legal"]
    assert action["action"] in legal
    return {action["action"]}


def test_the_c_bot_reads_escaped_strings_nested_state_and_any_key_order(c_random_bot):
    chosen = set()
    for seed in range(1, 12):
        chosen |= check_replies(talk([str(c_random_bot)], seed))
    assert len(chosen) > 1  # the seed changes the choice


def test_the_javascript_bot_reads_escaped_strings_nested_state_and_any_key_order(node):
    chosen = set()
    for seed in range(1, 12):
        chosen |= check_replies(talk([node, str(BOTS / "js" / "random_bot.js")], seed))
    assert len(chosen) > 1


def test_the_c_bot_reads_a_line_longer_than_its_first_buffer(c_random_bot):
    request = json.loads(TRICKY_REQUEST)
    request["state"]["padding"] = "x" * 300_000
    lines = [json.dumps(HELLO), json.dumps(request), json.dumps(GAME_OVER)]
    proc = subprocess.run([str(c_random_bot), "3"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=20)
    assert proc.returncode == 0, proc.stderr
    assert check_replies([json.loads(x) for x in proc.stdout.splitlines()])
