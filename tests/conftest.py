"""What the whole suite shares: how many pytest-xdist workers `-n auto` starts.

The README's test command runs the suite with ``-n auto --dist loadgroup``
(CONTRIBUTING.md, "Tests run in parallel"). Most of a test's wall time is spent
waiting on real subprocesses (bots answering, limits running out, the CLI
starting), not computing, so two workers per core keep the cores busy."""

from __future__ import annotations

import os

import pytest

WORKERS_PER_CORE = 2


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook; unknown when run with -p no:xdist
def pytest_xdist_auto_num_workers(config) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return WORKERS_PER_CORE * cores
