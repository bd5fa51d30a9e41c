"""The runner's dispatch order (``tournaments.runner._dispatch``) and the local
executor's choice of worker (``WorkerPool.fresh_for``): a game is not sent
where its bots have played its deal when a later game can go first."""

from __future__ import annotations

from types import SimpleNamespace

import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.match.types import BotSpec
from tournaments.runner import _dispatch
from tournaments.schedule import ScheduledGame
from tournaments.workers import WorkerPool, _deal_keys, _Worker

A, B = BotSpec("a", ("a",)), BotSpec("b", ("b",))


def duplicate_games(deals: int) -> list[ScheduledGame]:
    """Every deal in both seatings, one after the other, as the schedule lists them."""
    return [ScheduledGame(2 * d + k, ("a", "b"), d, k, ("a", "b") if k == 0 else ("b", "a"), 1000 + d)
            for d in range(deals) for k in (0, 1)]


async def start_order(games: list[ScheduledGame], jobs: int, fresh=lambda game: True) -> list[int]:
    """The order ``_dispatch`` starts ``games`` in; each game ends when the next one would start."""
    order: list[int] = []
    limiter = trio.CapacityLimiter(jobs)

    async def play_one(game: ScheduledGame, token: object, cancel: trio.CancelScope) -> None:
        order.append(game.id)
        await trio.sleep(1 + game.id % 3)
        limiter.release_on_behalf_of(token)

    await _dispatch(games, limiter, play_one, fresh=fresh)
    return order


async def test_without_a_preference_the_games_start_in_game_id_order(autojump_clock):
    games = duplicate_games(6)
    assert await start_order(games, 2) == [g.id for g in games]


async def test_a_game_that_is_not_fresh_lets_later_fresh_ones_go_first_but_at_most_jobs_of_them(autojump_clock):
    games = duplicate_games(3)
    assert await start_order(games, 2, fresh=lambda game: game.id != 1) == [0, 2, 3, 1, 4, 5]
    assert await start_order(games, 1, fresh=lambda game: game.id != 1) == [0, 2, 1, 3, 4, 5]


@settings(max_examples=200, deadline=None)
@given(jobs=st.integers(1, 4), stale=st.sets(st.integers(0, 11)))
def test_every_game_starts_once_and_at_most_jobs_places_late(jobs, stale):
    games = duplicate_games(6)
    order = trio.run(start_order, games, jobs, lambda game: game.id not in stale,
                     clock=trio.testing.MockClock(autojump_threshold=0))
    assert sorted(order) == list(range(12))
    for place, game in enumerate(order):
        assert sum(1 for later in order[:place] if later > game) <= jobs  # games that overtook it
    first_fresh = next((g.id for g in games if g.id not in stale), None)
    if first_fresh is not None and first_fresh <= jobs:
        assert order[0] == first_fresh  # within the window, a fresh game goes first


class ScriptedWorker(_Worker):
    """A worker whose games take scripted times; it notes the deals it was sent again."""

    def __init__(self, index: int, durations: list[float]) -> None:
        super().__init__(index, None, SimpleNamespace(pid=100 + index))  # type: ignore[arg-type]
        self.durations = durations
        self.repeats = 0

    async def play(self, job_id, job):
        self.waiting[job_id] = None  # busy until the game ends
        try:
            await trio.sleep(self.durations.pop(0) if self.durations else 1.0)
        finally:
            del self.waiting[job_id]
        return {"id": job_id, "result": {}}


async def play_on(workers: list[ScriptedWorker], games: list[ScheduledGame], use_fresh: bool) -> list[int]:
    """Dispatch ``games`` to ``workers`` as ``referee run`` does; the games sent where their deal had been."""
    pool = WorkerPool(workers, stop_s=1.0)
    limiter = trio.CapacityLimiter(len(workers))
    repeats: list[int] = []

    async def play_one(game: ScheduledGame, token: object, cancel: trio.CancelScope) -> None:
        bots = [b.to_json() for b in ((A, B, A, B) if game.arrangement == 0 else (B, A, B, A))]
        if not pool.fresh_for(game.seed, [A, B]):
            repeats.append(game.id)
        await pool.submit({"seed": game.seed, "bots": bots})
        limiter.release_on_behalf_of(token)

    fresh = (lambda game: pool.fresh_for(game.seed, [A, B])) if use_fresh else (lambda game: True)
    await _dispatch(games, limiter, play_one, fresh=fresh)
    return repeats


async def test_a_fast_worker_is_given_a_new_deal_not_the_other_seating_of_its_last_one(autojump_clock):
    # Worker 0 finishes every game half a game before worker 1: in game-id order it
    # gets both seatings of deal 1 (its kept bots could not play the second: new processes).
    def workers():
        return [ScriptedWorker(0, [1.0] * 20), ScriptedWorker(1, [2.5] + [1.0] * 20)]

    games = duplicate_games(8)
    assert 3 in await play_on(workers(), games, use_fresh=False)
    # Only the very last game, which no other game could go before, still goes to worker 0.
    assert await play_on(workers(), games, use_fresh=True) == [15]


def test_fresh_for_looks_at_the_worker_the_job_would_go_to():
    w0, w1 = ScriptedWorker(0, []), ScriptedWorker(1, [])
    pool = WorkerPool([w0, w1], stop_s=1.0)
    w0.given = _deal_keys(7, [A.to_json()])
    assert pool.fresh_for(7, [A])  # w1 is as idle as w0 and has not played deal 7
    assert pool.fresh_for(8, [A]) and pool.fresh_for(7, [B])  # another deal; another bot
    w1.waiting[1] = None  # w1 busy: the job would go to w0, which played deal 7 with bot a
    assert not pool.fresh_for(7, [A])
    assert not pool.fresh_for(7, [B, A])
