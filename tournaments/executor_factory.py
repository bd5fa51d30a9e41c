"""``open_executor``: the one place that names the executors and picks one for a run
(``tournaments.executors`` is the interface and imports neither implementation)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from .config import Tournament, default_jobs
from .executors import Executor, ExecutorSetupError

#: How to get Dask, said where it is missing: the project is installed from its checkout
#: (README), so `pip install 'referee[dask]'` would look for a package on PyPI instead.
DASK_MISSING = ("needs Dask, the project's dask extra: in the checkout, "
                "`.venv/bin/pip install -e '.[dask]'` (docs/distributed.md)")


@asynccontextmanager
async def open_executor(t: Tournament, games: int) -> AsyncIterator[Executor]:
    """The executor ``t`` asks for, ready to play ``games`` games; stopped on exit
    (games in flight included, within a bound)."""
    if t.dask is not None:
        try:
            from .dask_executor import open_dask_executor  # dask is imported only here
        except ImportError as exc:
            if exc.name not in ("dask", "distributed"):
                raise
            raise ExecutorSetupError(f"dask = {t.dask!r} {DASK_MISSING}") from None

        async with open_dask_executor(t) as executor:
            yield executor
        return
    from .workers import open_worker_pool

    workers = min(t.jobs, games, default_jobs())  # one per core at most
    async with open_worker_pool(workers, pin=t.pin_cores, limits=t.limits) as pool:
        pool.jobs = t.jobs
        yield pool
