"""What the whole suite shares: how many pytest-xdist workers `-n auto` starts.

The README's test command runs the suite with ``-n auto``
(CONTRIBUTING.md, "Tests run in parallel"). Most of a test's wall time is spent
waiting on real subprocesses (bots answering, limits running out, the CLI
starting), not computing, so two workers per core keep the cores busy."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

WORKERS_PER_CORE = 2


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook; unknown when run with -p no:xdist
def pytest_xdist_auto_num_workers(config) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return WORKERS_PER_CORE * cores


@contextmanager
def one_at_a_time(name: str) -> Iterator[None]:
    """Hold a machine-wide lock named ``name`` (a file lock in the temp folder): tests that
    use something every process shares (files all sandboxes can read, say) run one after
    another, whichever pytest-xdist worker runs them. (xdist's ``xdist_group`` with
    ``--dist loadgroup`` renames the test's node id, which pytest 9 no longer reads: the
    groups were silently ignored.)"""
    path = Path(tempfile.gettempdir()) / f"referee-tests-{name}.lock"
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
