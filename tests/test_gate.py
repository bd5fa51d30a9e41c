"""The static gate (CONTRIBUTING.md, "The gate") is part of the suite: ruff over the whole tree,
mypy over the production packages, with the settings in ``pyproject.toml``.

So the README's test command checks everything CI checks, and ``.ci/run`` runs that command
alone. In a full run the two tools use cores that would otherwise wait on tests' subprocesses;
before, ``.ci/run`` ran them first, on their own, at ~25 s, and installed the venv twice.
Their caches (``.ruff_cache``, ``.mypy_cache``, each with its own ``.gitignore``) make a
second run take a second."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: What mypy checks (CONTRIBUTING.md): the production packages.
TYPED = ("referee", "referee_cli", "protocol", "tournaments")


def gate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing_in_the_whole_tree():
    res = gate("ruff", "check", ".")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip() == "All checks passed!", res.stdout


@pytest.mark.slow
def test_mypy_finds_nothing_in_the_production_packages():
    res = gate("mypy", *TYPED)
    assert res.returncode == 0, res.stdout + res.stderr
    found = re.search(r"^Success: no issues found in (\d+) source files$", res.stdout, re.M)
    # Every module of the four packages was checked, none left out by a setting.
    modules = sum(1 for name in TYPED for _ in (ROOT / name).rglob("*.py"))
    assert found and int(found[1]) == modules, (res.stdout, modules)
