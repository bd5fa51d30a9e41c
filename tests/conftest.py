"""What the whole suite shares: how many pytest-xdist workers `-n auto` starts, the patience of
games whose tests are not about time (``PATIENT``), fixtures built once per run, and the order.

The README's test command runs the suite with ``-n auto``
(CONTRIBUTING.md, "Tests run in parallel"). A test's time is mostly its real
subprocesses' CPU (the CLI starting, bots, game workers), with some waiting
(limits running out, polling): three workers per two cores keep the cores busy.
Two per core (4 on this 2-core machine) did worse, from the contention: fresh-clone
`.ci/run` 15 min 30 s and 16 min 12 s with 26.5-27.6 min of CPU, against 14 min 35 s
with 25.0 min of CPU for three.

Before the workers start (``pytest_configure``), it also compiles the
project's modules to bytecode (``compile_bytecode``); the modules with a test marked
``slow`` are collected first (``pytest_collection_modifyitems``)."""

from __future__ import annotations

import compileall
import fcntl
import os
import resource
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from referee.match.types import Limits
from tournaments.config import available_cores

WORKERS_PER_TWO_CORES = 3
#: The limits of a game whose test is not about time: a decision may take 10 s of wall time, not
#: the default 1 s. Under the full suite's load (three workers and their bots on two cores) a
#: random bot once took over a second to be scheduled and answer, and a test of who wins failed
#: on a timeout fault. Tests of the time limits set their own.
PATIENT = Limits(decision_s=10.0, handshake_s=30.0)
#: The same patience as ``referee play``/``run`` flags, for the tests that play through the CLI.
PATIENT_FLAGS = ("--decision-ms", str(round(PATIENT.decision_s * 1000)))
ROOT = Path(__file__).resolve().parents[1]
#: What the suite's subprocesses import from the checkout: the CLI and the bots.
COMPILED = ("referee", "referee_cli", "protocol", "tournaments", "sample_bots", "tests/fixtures")


def compile_bytecode() -> None:
    """Write ``__pycache__`` for the checkout's own modules, as ``pip install`` does for
    site-packages. With ``PYTHONDONTWRITEBYTECODE=1`` in the environment (as on the machine
    this suite was written on), an editable checkout's modules are otherwise compiled from
    source in every process that imports them: each ``referee`` subprocess of the suite
    paid ~0.12 s of CPU for it, each bot that imports an engine more. Bytecode is only read
    where the source is unchanged (its timestamp is checked), so no test sees anything but
    the code it tests; ``.gitignore`` keeps the files out of commits."""
    for name in COMPILED:
        compileall.compile_dir(ROOT / name, quiet=2)


def rewrite_test_modules(config) -> None:
    """Write pytest's cache of the test modules with their asserts rewritten, once, before the
    xdist workers start. Each worker imports every test module to collect it, and rewriting the
    asserts of ~200 modules cost each worker ~6 s of CPU: with three workers starting at the same
    moment on a fresh checkout, none finds another's cache, and where ``PYTHONDONTWRITEBYTECODE``
    is set pytest writes none at all. The cache is pytest's own (``__pycache__/*-pytest-*.pyc``,
    checked against a hash of the source, written atomically), read by pytest's own import hook;
    this only fills it. Its functions are internal to pytest: if they change, nothing is written
    and every worker rewrites for itself, as before."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        for fn in sorted((ROOT / "tests").rglob("*.py")):
            if not (fn.name == "conftest.py" or fn.name.startswith("test_")):
                continue
            pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(fn, pyc) is None and rewrite.try_makedirs(pyc.parent):
                source_hash, code = rewrite._rewrite_test(fn, config)
                rewrite._write_pyc(state, code, source_hash, pyc)
    except (ImportError, AttributeError, KeyError, TypeError):
        return


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        compile_bytecode()
        if config.getoption("assertmode") == "rewrite" and config.pluginmanager.has_plugin("xdist"):
            rewrite_test_modules(config)


def pytest_collection_modifyitems(config, items) -> None:
    """The modules that hold a test marked ``slow`` run first, each still in one piece (so a
    module's fixtures are made once per worker, as before), in their usual order; the rest
    follow in theirs. pytest-xdist hands tests out roughly in collection order, so a long
    test collected late ran at the very end, with one worker busy and the other cores idle:
    a fresh-clone run spent its last ~35 s at about half the machine. Mark a test ``slow``
    when it takes ~10 s or more of wall time in a full run."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)  # stable: False first


def pytest_terminal_summary(terminalreporter, config) -> None:
    """The CPU this run used, and the shortest wall time any schedule could have given it on
    this machine's cores: the floor the suite's speed is measured against (issue #25). It
    counts this process and every process it and its children waited for (the xdist workers,
    the ``referee`` subprocesses, the bots); not what was left to ``init``."""
    if hasattr(config, "workerinput"):
        return
    me, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + waited.ru_utime + waited.ru_stime
    cores = len(available_cores())
    terminalreporter.write_line(f"CPU used by the tests: {cpu:.0f} s (user + system); on {cores} cores no "
                                f"schedule runs them in under {cpu / cores:.0f} s of wall time")


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook; unknown when run with -p no:xdist
def pytest_xdist_auto_num_workers(config) -> int:
    cores = len(available_cores())
    return max(1, WORKERS_PER_TWO_CORES * cores // 2)


@contextmanager
def one_at_a_time(name: str) -> Iterator[None]:
    """Hold a machine-wide lock named ``name`` (a file lock in the temp folder): tests that
    use something every process shares (files all sandboxes can read, say) run one after
    another, whichever pytest-xdist worker runs them. (xdist's ``xdist_group`` with
    ``--dist loadgroup`` renames the test's node id, which pytest 9 no longer reads: the
    groups were silently ignored.)"""
    with _locked(Path(tempfile.gettempdir()) / f"referee-tests-{name}.lock"):
        yield


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the file ``path`` (made if missing)."""
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``build(folder)`` once per test run, for tests that
    only read what is in it.

    A module-scoped fixture runs once in each pytest-xdist worker that runs one of the
    module's tests: a finished tournament or a set of recorded games was made up to four
    times. Here the first worker to ask builds it in the run's own temporary folder (the
    parent of the workers' folders) under a file lock; the others wait and share it.
    Without xdist the folder is in the run's temporary folder as usual. A build that
    failed is started over by the next test that asks, which then fails the same way."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # <run>/popen-gwN -> <run>, one per test run
    folder = base / f"once-{name}"
    with _locked(base / f"once-{name}.lock"):
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder
