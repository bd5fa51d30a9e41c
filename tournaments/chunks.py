"""Chunks: how a Dask run cuts its games into tasks (docs/distributed.md, "Chunks").

A *unit* is every seating of one deal of a pairing (``ScheduledGame.deal_key``):
two games in a two-team game, six in Schmier.  A *chunk* is a run of whole
units, in game-id order, played one game after another by one Dask task: the
seatings of a deal stay together, so twins never run at once, and a chunk's
deals are disjoint from every other chunk's.  A chunk's id is its first game's
id, so the chunk that holds a game is the same whoever plays it and however
often (a worker died, an audit).

``ChunkPlanner`` sizes them: a given ``batch`` (games) is rounded up to whole
units; without one, the first chunks are one unit each, to measure the game
time, and later ones last about ``TARGET_S`` -- never so long that the run's
last chunks leave workers idle (at most the remaining units over
``TAIL_CHUNKS_PER_THREAD`` per thread).  Pure: no Dask, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from .schedule import ScheduledGame, stable_hash

TARGET_S = 20.0  # a chunk of the default size lasts about this long
MAX_S = 60.0  # ... and at most about this long
TAIL_CHUNKS_PER_THREAD = 3  # near the run's end, chunks shrink so each thread still gets this many
IN_FLIGHT_PER_THREAD = 2  # chunks submitted per worker thread: one running, one queued behind it
AUDIT_TAG = "referee-audit-v1"


@dataclass(frozen=True, slots=True)
class Chunk:
    id: int  # its first game's id
    games: tuple[ScheduledGame, ...]

    @property
    def units(self) -> int:
        return len({g.deal_key for g in self.games})


def units_of(games: Sequence[ScheduledGame]) -> list[tuple[ScheduledGame, ...]]:
    """The games grouped by deal (every seating of one deal together), in the order of
    each deal's first game; within a unit, game-id order."""
    by_deal: dict[Hashable, list[ScheduledGame]] = {}
    for game in sorted(games, key=lambda g: g.id):
        by_deal.setdefault(game.deal_key, []).append(game)
    return [tuple(unit) for unit in by_deal.values()]


def units_for_batch(batch: int, unit_size: int) -> int:
    """``batch`` games as whole units: rounded up (a batch of 3 in a two-seating game is 2 units, 4 games)."""
    if batch < 1:
        raise ValueError(f"batch {batch}: at least 1")
    return max(1, math.ceil(batch / max(1, unit_size)))


def audited(chunk_id: int, seed: int, share: float) -> bool:
    """Whether the chunk that starts at game ``chunk_id`` is replayed on another worker:
    reproducible from the tournament seed, about ``share`` of all chunks."""
    if share <= 0:
        return False
    return stable_hash(AUDIT_TAG, seed, chunk_id) < share * 2**63


class ChunkPlanner:
    """Hands out the pending games as chunks of whole units, in order."""

    def __init__(self, pending: Sequence[ScheduledGame], batch: int | None) -> None:
        self._units = units_of(pending)
        self._next = 0
        unit_size = max((len(u) for u in self._units), default=1)
        self.fixed = units_for_batch(batch, unit_size) if batch is not None else None
        self._game_s: list[float] = []  # measured game times (wall time of a chunk over its games)

    @property
    def remaining_units(self) -> int:
        return len(self._units) - self._next

    def measured(self, seconds: float, games: int) -> None:
        """A chunk of ``games`` games took ``seconds`` on its worker."""
        if games > 0:
            self._game_s.append(seconds / games)

    def game_s(self) -> float | None:
        """The median measured game time, None before the first chunk."""
        if not self._game_s:
            return None
        ordered = sorted(self._game_s)
        return ordered[len(ordered) // 2]

    def size(self, threads: int) -> int:
        """Units in the next chunk (``threads``: worker threads now)."""
        if self.fixed is not None:
            return self.fixed
        game_s = self.game_s()
        if game_s is None:
            return 1  # measure first
        unit_games = max(1, max(len(u) for u in self._units))
        wanted = max(1, round(TARGET_S / max(game_s * unit_games, 1e-6)))
        tail = max(1, self.remaining_units // (TAIL_CHUNKS_PER_THREAD * max(1, threads)))
        return max(1, min(wanted, tail))

    def next(self, threads: int) -> Chunk | None:
        if self._next >= len(self._units):
            return None
        take = self._units[self._next:self._next + self.size(threads)]
        self._next += len(take)
        games = tuple(g for unit in take for g in unit)
        return Chunk(games[0].id, games)
