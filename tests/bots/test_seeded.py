"""Every sample bot plays the same game again when the game and its seed are the same.

The random bots take their seed as their first argument (``{seed}`` in a
``referee play`` or tournament command fills it in); the same seed gives the
same choices and another seed other ones, so a seeded game repeats exactly.
The heuristic bots and the event follower draw no random numbers at all: the
same game gives the same choices.
"""

from __future__ import annotations

import pytest

from referee.match.record import DecisionLine, read_record
from referee.match.runner import run_match
from referee.match.types import BotSpec

from ..conftest import PATIENT
from .conftest import BOTS, HEURISTIC, python_bot

GAME, OPTIONS = "pegs-and-jokers", {"players": 4, "max_turns": 300}


async def actions(bots: list[BotSpec], tmp_path, game=GAME, options=None, seed=3) -> list[str]:
    record = tmp_path / f"game{len(list(tmp_path.iterdir()))}.jsonl"
    result = await run_match(game, OPTIONS if options is None else options, bots, seed=seed, record_path=record,
                             limits=PATIENT)
    assert result.fault is None, result.fault
    played = [e.action for e in read_record(record).entries if isinstance(e, DecisionLine)]
    assert len(played) > 50
    return played


async def assert_seeded(make, tmp_path) -> None:
    """``make(seed)`` -> the BotSpec of a bot seeded with ``seed``: the same seeds repeat the game,
    other seeds (same deals) play it differently."""
    first = await actions([make(10 + s) for s in range(4)], tmp_path)
    again = await actions([make(10 + s) for s in range(4)], tmp_path)
    other = await actions([make(20 + s) for s in range(4)], tmp_path)
    assert first == again
    assert first != other


async def test_the_python_random_bot_is_seeded_by_its_first_argument(tmp_path):
    await assert_seeded(lambda seed: python_bot(BOTS / "random_bot.py", str(seed)), tmp_path)


async def test_the_protocol_helper_random_bot_is_seeded_by_its_first_argument(tmp_path):
    await assert_seeded(lambda seed: python_bot(BOTS / "python_random_bot.py", str(seed)), tmp_path)


async def test_the_javascript_random_bot_is_seeded_by_its_first_argument(node, tmp_path):
    await assert_seeded(lambda seed: BotSpec(name="js", command=(node, str(BOTS / "js" / "random_bot.js"),
                                                                 str(seed))), tmp_path)


async def test_the_c_random_bot_is_seeded_by_its_first_argument(c_random_bot, tmp_path):
    await assert_seeded(lambda seed: BotSpec(name="c", command=(str(c_random_bot), str(seed))), tmp_path)


async def test_the_random_bots_take_a_tournament_sized_seed(tmp_path):
    """``{seed}`` fills in up to 63 bits (``tournaments.schedule.bot_seed``)."""
    big = 2**63 - 1
    await assert_seeded(lambda seed: python_bot(BOTS / "random_bot.py", str(big - seed)), tmp_path)


@pytest.mark.parametrize("game", sorted(HEURISTIC))
async def test_the_heuristic_bots_repeat_their_game(game, tmp_path):
    options = {"pegs-and-jokers": OPTIONS, "schmier": {"max_deals": 8}}.get(game, {})
    seats = {"schmier": 6}.get(game, 4)

    def lineup():
        return [python_bot(HEURISTIC[game]) if s % 2 == 0 else python_bot(BOTS / "random_bot.py", str(s))
                for s in range(seats)]

    assert await actions(lineup(), tmp_path, game, options) == await actions(lineup(), tmp_path, game, options)


async def test_the_event_follower_repeats_its_game(tmp_path):
    def lineup():
        return [python_bot(BOTS / "event_follower.py") if s % 2 == 0 else python_bot(BOTS / "random_bot.py", str(s))
                for s in range(4)]

    assert await actions(lineup(), tmp_path) == await actions(lineup(), tmp_path)
