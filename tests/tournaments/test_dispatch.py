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
from tournaments.workers import WorkerError, WorkerPool, _Worker

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


def schmier_games(deals: int) -> list[ScheduledGame]:
    """Every deal in all six arrangements of three entrants (Schmier), one after the other."""
    import itertools

    arrangements = list(itertools.permutations(("a", "b", "c")))
    return [ScheduledGame(6 * d + k, ("a", "b", "c"), d, k, arrangements[k], 1000 + d)
            for d in range(deals) for k in range(6)]


async def play_log(games: list[ScheduledGame], jobs: int, apart, fresh=lambda game: True):
    """Start times, end times and the most games of one deal in play at once under ``_dispatch``."""
    spans: dict[int, list[float]] = {}
    limiter = trio.CapacityLimiter(jobs)
    in_play: dict[tuple, int] = {}
    most = [0]

    async def play_one(game: ScheduledGame, token: object, cancel: trio.CancelScope) -> None:
        spans[game.id] = [trio.current_time()]
        in_play[game.deal_key] = in_play.get(game.deal_key, 0) + 1
        most[0] = max(most[0], in_play[game.deal_key])
        await trio.sleep(1 + game.id % 3)
        in_play[game.deal_key] -= 1
        spans[game.id].append(trio.current_time())
        limiter.release_on_behalf_of(token)

    await _dispatch(games, limiter, play_one, fresh=fresh, apart=apart)
    return spans, most[0]


@settings(max_examples=100, deadline=None)
@given(jobs=st.integers(1, 6), stale=st.sets(st.integers(0, 17)), schmier=st.booleans())
def test_the_seatings_of_one_deal_never_run_at_the_same_time(jobs, stale, schmier):
    games = schmier_games(3) if schmier else duplicate_games(9)
    key = lambda game: game.deal_key  # noqa: E731
    spans, most = trio.run(play_log, games, jobs, key, lambda game: game.id not in stale,
                           clock=trio.testing.MockClock(autojump_threshold=0))
    assert sorted(spans) == [g.id for g in games]  # every game played once
    assert most == 1, "two seatings of one deal were in play at once"
    order = sorted(spans, key=lambda i: spans[i][0])
    for place, game in enumerate(order):
        assert sum(1 for later in order[:place] if later > game) <= jobs  # games that overtook it
    if not stale and not schmier:  # the places stay busy: another deal's game fills the twin's
        work = sum(1 + g.id % 3 for g in games)
        assert max(s[1] for s in spans.values()) <= work / min(jobs, 9) + 2 * 3


async def test_without_the_rule_the_seatings_of_a_deal_do_run_at_the_same_time(autojump_clock):
    # The rule is what keeps them apart: the same dispatch without it overlaps them.
    _, most = await play_log(duplicate_games(4), 2, None)
    assert most == 2
    _, most = await play_log(duplicate_games(4), 2, lambda game: game.deal_key)
    assert most == 1


class ScriptedWorker(_Worker):
    """A worker whose games take scripted times and whose bots say they play many
    games (the reply names them as kept); it notes when it started each game."""

    def __init__(self, index: int, durations: list[float], kept: tuple[str, ...] = ("a", "b")) -> None:
        super().__init__(index, None, SimpleNamespace(pid=100 + index))  # type: ignore[arg-type]
        self.durations = durations
        self.kept = list(kept)
        self.played: list[tuple[int, float]] = []  # (deal seed, start time)

    @property
    def repeats(self) -> list[int]:
        """Seeds of the deals it was sent a second time."""
        seeds = [seed for seed, _ in self.played]
        return [seed for i, seed in enumerate(seeds) if seed in seeds[:i]]

    async def play(self, job_id, job):
        if self.failure is not None:
            raise WorkerError(self.failure)
        self.played.append((job["seed"], trio.current_time()))
        self.waiting[job_id] = None  # busy until the game ends
        try:
            await trio.sleep(self.durations.pop(0) if self.durations else self.durations_after)
        finally:
            del self.waiting[job_id]
        if self.failure is not None:
            raise WorkerError(self.failure)
        return {"id": job_id, "result": {}, "kept": self.kept}

    durations_after = 1.0


def job(game: ScheduledGame) -> dict:
    return {"seed": game.seed, "bots": [b.to_json() for b in (A, B, A, B)]}


async def play_on(workers: list[ScriptedWorker], games: list[ScheduledGame], use_fresh: bool) -> float:
    """Dispatch ``games`` to ``workers`` as ``referee run`` does; when the last one ended."""
    pool = WorkerPool(workers, stop_s=1.0)
    limiter = trio.CapacityLimiter(len(workers))
    start = trio.current_time()

    async def play_one(game: ScheduledGame, token: object, cancel: trio.CancelScope) -> None:
        await pool.submit(job(game))
        limiter.release_on_behalf_of(token)

    if use_fresh:
        await _dispatch(games, limiter, play_one, fresh=lambda game: pool.fresh_for(game.seed, [A, B]),
                        wait_fresh=lambda game: pool.wait_fresh(game.seed, [A, B]))
    else:
        await _dispatch(games, limiter, play_one)
    return trio.current_time() - start


def uneven() -> list[ScriptedWorker]:
    # Worker 0 finishes every game half a game before worker 1: in game-id order it
    # is free when the other seating of its last deal is next.
    return [ScriptedWorker(0, [1.0] * 20), ScriptedWorker(1, [2.5] + [1.0] * 20)]


async def test_a_deal_never_goes_back_to_a_worker_that_kept_its_bots_and_the_free_worker_takes_a_new_deal(
        autojump_clock):
    games = duplicate_games(8)
    workers = uneven()
    await play_on(workers, games, use_fresh=False)
    assert workers[0].repeats == [1001]  # in game-id order, deal 1's second seating went back to worker 0
    workers, t0 = uneven(), trio.current_time()
    ended = await play_on(workers, games, use_fresh=True)
    assert workers[0].repeats == workers[1].repeats == []  # worker 0 took deal 2 instead, and so on
    # The last game had nothing to let go first: it waited half a game for worker 1.
    assert workers[1].played[-1] == (1007, t0 + 8.5) and ended == 9.5


async def test_when_one_worker_is_much_slower_the_fast_one_starts_new_processes_once_and_goes_on(autojump_clock):
    fast, slow = ScriptedWorker(0, []), ScriptedWorker(1, [])
    slow.durations_after = 3.0
    ended = await play_on([fast, slow], duplicate_games(10), use_fresh=True)
    assert len(fast.repeats) >= 1 and slow.repeats == []  # it took both seatings of a deal, then more
    assert len(fast.played) > 2 * len(slow.played)
    assert ended < 10 * 3.0  # not one seating of every deal each: that would take the slow one 30 s


async def test_bots_no_worker_keeps_are_dispatched_in_order_and_never_wait(autojump_clock):
    workers = [ScriptedWorker(0, [1.0] * 20, kept=()), ScriptedWorker(1, [2.5] + [1.0] * 20, kept=())]
    ended = await play_on(workers, duplicate_games(8), use_fresh=True)
    assert workers[0].repeats and ended == 9.0  # a process per game: a repeated deal costs nothing
    starts = sorted((t, seed) for w in workers for seed, t in w.played)
    assert [seed for _, seed in starts] == [g.seed for g in duplicate_games(8)]  # in game-id order


async def test_waiting_for_a_fresh_worker_ends_when_it_dies(autojump_clock):
    w0, w1 = ScriptedWorker(0, [1.0]), ScriptedWorker(1, [5.0])
    pool = WorkerPool([w0, w1], stop_s=1.0)
    pool.kept = {"a", "b"}
    first = duplicate_games(1)[0]
    w0.given.update({(first.seed, "a"): 1, (first.seed, "b"): 1})  # worker 0 played the deal
    failed = []

    async def doomed() -> None:
        try:
            await pool.submit(job(duplicate_games(2)[2]))
        except WorkerError as exc:
            failed.append(str(exc))

    async with trio.open_nursery() as nursery:
        w0.waiting[99] = None  # busy for a moment: the next job goes to worker 1
        nursery.start_soon(doomed)
        await trio.sleep(0.1)
        del w0.waiting[99]
        assert not pool.fresh_for(first.seed, [A, B])
        waited: list[float] = []

        async def wait() -> None:
            await pool.wait_fresh(first.seed, [A, B])  # only worker 1 has not played the deal
            waited.append(trio.current_time())

        nursery.start_soon(wait)
        await trio.sleep(1)
        assert waited == []
        w1.failure = "worker process 101 was killed"  # its game fails when it ends, at 5 s
    assert failed == ["worker process 101 was killed"] and waited == [5.0]


def test_fresh_for_looks_at_the_worker_the_job_would_go_to_and_what_it_holds():
    w0, w1 = ScriptedWorker(0, []), ScriptedWorker(1, [])
    pool = WorkerPool([w0, w1], stop_s=1.0)
    w0.given[7, "a"] = 1
    assert pool.fresh_for(7, [A])  # no bot is known to be kept yet: every game is fresh
    pool.kept = {"a", "b"}
    assert pool.fresh_for(7, [A])  # w1 is as idle as w0 and has not played deal 7
    assert pool.fresh_for(8, [A]) and pool.fresh_for(7, [B])  # another deal; another bot
    w1.waiting[1] = None  # w1 busy: the job would go to w0, which played deal 7 with bot a
    assert not pool.fresh_for(7, [A])
    assert not pool.fresh_for(7, [B, A])
    w0.sets["a"] = 2  # w0 once played two games of one deal: it holds two sets of a's processes
    assert pool.fresh_for(7, [A])
