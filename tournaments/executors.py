"""Where a tournament's games are played: the executor seam.

An executor takes one game as plain data, a *job* (``make_job``: game,
options, bots, seed, record path, limits, stderr folder, paths to hide; all
JSON), has it played by ``tournaments.job.play_job`` somewhere, and
gives back the *reply* that function made (``{"result": ...}`` or
``{"error": ...}``).  Everything else (which games, in what order, how many
at once, results, standings, progress, stopping) is the runner's and the
same for every executor.  Two implementations:

* ``tournaments.workers.WorkerPool``: worker processes on this machine, one
  per core (the default);
* ``tournaments.dask_executor.DaskExecutor``: the workers of a Dask cluster
  (``referee run --dask ADDRESS``, docs/distributed.md).  Dask is imported
  only when a run asks for it.

The interface names no implementation: ``tournaments.executor_factory.open_executor``
is the one place that chooses between them.

``Executor.play`` has ``run_match``'s signature, so the runner (and the tests)
can play a game in this process, by a fake, or by an executor alike.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from referee.errors import OutputError, RefereeBug, UserFault
from referee.match.types import BotSpec, Limits, MatchResult

Job = dict[str, Any]  # JSON: see make_job
Reply = dict[str, Any]  # JSON: what tournaments.job.play_job returns, plus "worker": who played it


class ExecutorError(RefereeBug):
    """A game could not be played for a reason that is neither a bot's nor the user's."""


class ExecutorSetupError(UserFault):
    """The executor cannot play this tournament as set up (a worker that lacks a bot, other versions)."""


def make_job(
    game: str, options: dict | None, bots: Sequence[BotSpec], *, seed: int, record_path: Path | None = None,
    limits: Limits = Limits(), stderr_dir: Path | None = None, hide: Sequence[Path] = (),
) -> Job:
    """``run_match``'s arguments as plain data (``tournaments.job.play_job`` reads it back)."""
    return {
        "game": game, "options": options or {}, "bots": [b.to_json() for b in bots], "seed": seed,
        "record_path": str(record_path) if record_path is not None else None,
        "limits": limits.to_json(), "stderr_dir": str(stderr_dir) if stderr_dir is not None else None,
        "hide": [str(p) for p in hide],
    }


class Executor(ABC):
    """Plays jobs.  Subclasses implement ``submit``; ``play`` is the same for all."""

    error: ClassVar[type[Exception]] = ExecutorError
    jobs: int  # how many games the runner should keep in flight

    @abstractmethod
    async def submit(self, job: Job) -> Reply:
        """Have ``job`` played; its reply.  The job's record and stderr files are
        where the job says, on this machine, once this returns."""

    def fresh_for(self, seed: int, bots: Sequence[BotSpec]) -> bool:
        """Whether a game of deal ``seed`` with ``bots``, submitted now, would go
        where none of these bots has been given that deal.  A long-lived bot
        process never plays a deal twice (it would remember the other
        seating's cards), so a game sent where its bots played its deal needs
        new processes: the runner lets a later game go first (``_dispatch``).
        By default every game is fresh: the executor places games itself."""
        return True

    async def wait_fresh(self, seed: int, bots: Sequence[BotSpec]) -> None:
        """Return once ``fresh_for(seed, bots)``, or once no worker could make it so
        (every live one has played the deal).  By default at once."""
        return None

    async def play(
        self, game: str, options: dict | None, bots: Sequence[BotSpec], *, seed: int,
        record_path: Path | None = None, limits: Limits = Limits(), stderr_dir: Path | None = None,
        hide: Sequence[Path] = (),
    ) -> MatchResult:
        reply = await self.submit(make_job(game, options, bots, seed=seed, record_path=record_path,
                                           limits=limits, stderr_dir=stderr_dir, hide=hide))
        if reply.get("output_error"):
            raise OutputError(reply["error"])
        if reply.get("setup_error"):
            raise ExecutorSetupError(f"{reply['worker']}: {reply['error']}")
        if "error" in reply:
            raise self.error(f"{reply['worker']}: {reply['error']}")
        result = MatchResult.from_json(reply["result"])
        result.record_path = record_path  # where this machine keeps it, whoever played the game
        return result
