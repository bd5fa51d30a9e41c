"""`referee worker SCHEDULER [--nworkers N] [DASK WORKER OPTIONS]`: join a Dask
cluster to play tournament games (docs/distributed.md).

A thin wrapper over ``dask worker SCHEDULER --nthreads 1``: first it reads the
versions a coordinator (``referee run --dask``) published on the scheduler and
refuses, in one line, when this machine's Python, referee, dask, distributed
or a game's rules version differs.  Before any coordinator has connected it
compares Python, dask and distributed with the scheduler's own; the
coordinator checks each worker again (versions and bot programs) before its
first game.  Options it does not know (``--tls-ca-file``, ``--name``, ...)
go to ``dask worker`` unchanged.  Dask is imported only by this command.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from referee_cli.errors import UserError


def _published(scheduler: str) -> tuple[dict[str, Any], bool]:
    """The versions to match: the coordinator's, else (False) the scheduler's own."""
    from tournaments import dask_executor

    client = dask_executor.connect(scheduler)
    try:
        published = client.get_metadata(dask_executor.VERSIONS_KEY, default=None)
        if published is not None:
            return published, True
        versions: Any = client.get_versions(check=False)  # a sync client: the value, not a coroutine
        packages = versions["scheduler"]["packages"]
    finally:
        client.close()
    here = dask_executor.local_versions()
    python = ".".join(str(packages.get("python", "")).split(".")[:3])
    # Only what the scheduler can tell: referee and the rules are checked by the coordinator.
    return {**here, "python": python, "dask": packages.get("dask"), "distributed": packages.get("distributed")}, False


def register(app: typer.Typer) -> None:
    @app.command(short_help="Join a Dask cluster as game workers for run --dask.",
                 context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def worker(
        ctx: typer.Context,
        scheduler: Annotated[str, typer.Argument(
            metavar="SCHEDULER", help="The Dask scheduler's address: tcp://HOST:8786 or tls://HOST:PORT")],
        nworkers: Annotated[int, typer.Option(
            "--nworkers", min=1, help="Worker processes to start, each playing one game at a time "
                                      "(typically one per core).")] = 1,
        check_only: Annotated[bool, typer.Option(
            "--check-only", help="Check the versions against the scheduler's and stop.")] = False,
        quiet: Annotated[bool, typer.Option(
            "--quiet", "-q", help="No line when the versions match, and Dask's own log at warning level.")] = False,
    ) -> None:
        """Join a Dask cluster as game workers for `referee run --dask` (checks versions first)."""
        from tournaments.config import check_dask_address

        try:
            if check_dask_address(scheduler).startswith("local:"):
                raise ValueError(f"{scheduler!r}: a worker joins a scheduler at tcp://HOST:PORT, not local:N")
        except ValueError as exc:
            raise UserError(f"referee worker: {exc}") from None
        try:
            from tournaments import dask_executor
        except ImportError as exc:
            if exc.name not in ("dask", "distributed"):
                raise
            from tournaments.executor_factory import DASK_MISSING

            raise UserError(f"referee worker {DASK_MISSING}") from None
        there, from_coordinator = _published(scheduler)
        differences = dask_executor.version_differences(dask_executor.local_versions(), there)
        if differences:
            whose = "the coordinator's" if from_coordinator else "the scheduler's"
            raise UserError(f"this machine cannot play games for {scheduler}: its versions differ from {whose}: "
                            f"{'; '.join(differences)} (install the same everywhere, docs/distributed.md)")
        if not quiet:
            print(f"referee worker: versions match {'the coordinator' if from_coordinator else 'the scheduler'} "
                  f"at {scheduler}", file=sys.stderr)
        if check_only:
            return
        if quiet:  # Dask's logging config from the environment (dask.config): warnings and errors only
            os.environ["DASK_LOGGING__DISTRIBUTED"] = "warning"
        from tournaments.config import dask_quiet_env

        os.environ.update(dask_quiet_env())  # less monitoring: CPU for the games (DASK_QUIET)
        argv = [sys.executable, "-m", "distributed.cli.dask_worker", scheduler, "--nthreads", "1",
                "--nworkers", str(nworkers), *ctx.args]
        sys.stderr.flush()
        os.execv(sys.executable, argv)
