"""What every executor runs for one game: ``play_job`` turns a job (``executors.make_job``,
plain JSON) into a reply, on whatever machine and in whatever process plays it (a local
worker process, ``tournaments.workers``; a Dask worker, ``tournaments.dask_executor``).
It names no executor, so both can import it and neither imports the other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.errors import output_error_in, save_traceback
from referee.match.pool import ProcessPool
from referee.match.runner import run_match
from referee.match.types import BotSpec, Limits


async def play_job(job: dict[str, Any], pool: ProcessPool | None = None) -> dict[str, Any]:
    try:
        result = await run_match(
            job["game"], job["options"], [BotSpec.from_json(b) for b in job["bots"]], seed=job["seed"],
            record_path=Path(job["record_path"]) if job["record_path"] else None,
            limits=Limits.from_json(job["limits"]),
            stderr_dir=Path(job["stderr_dir"]) if job["stderr_dir"] else None,
            hide=[Path(p) for p in job.get("hide", ())], pool=pool,
        )
    except Exception as exc:
        if (full := output_error_in(exc)) is not None:  # a full disk: the user's to fix, no traceback
            return {"id": job["id"], "error": str(full), "output_error": True}
        # A referee bug: report it with its saved traceback, keep serving.
        saved = save_traceback(exc)
        where = f" (worker traceback in {saved})" if saved is not None else ""
        return {"id": job["id"], "error": f"{type(exc).__name__}: {exc}{where}"}
    kept = sorted(pool.kept_names & {b["name"] for b in job["bots"]}) if pool is not None else []
    return {"id": job["id"], "result": result.to_json(), "kept": kept}
