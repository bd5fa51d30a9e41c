"""Without Dask installed (the `dask` extra), the two commands that need it say so in one
line, with the install command that works from the checkout, and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOT = f"{sys.executable} {ROOT / 'sample_bots' / 'random_bot.py'}"


@pytest.fixture
def without_dask(tmp_path):
    """An environment in which `import dask` / `import distributed` fail as on a machine without them."""
    for name in ("dask", "distributed"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            f"raise ModuleNotFoundError({f'No module named {name!r}'!r}, name={name!r})\n")
    return {**os.environ, "PYTHONPATH": str(tmp_path)}


@pytest.mark.parametrize("args", [
    ("run", "--game", "back-alley", "--entrant", f"a={BOT}", "--entrant", f"b={BOT}", "--dask", "local:1", "-q"),
    ("worker", "tcp://127.0.0.1:9", "--check-only"),
], ids=["run", "worker"])
def test_a_command_that_needs_dask_says_how_to_install_it(tmp_path, without_dask, args):
    res = subprocess.run([sys.executable, "-m", "referee", *args, *(("--output", tmp_path / "o") if args[0] == "run"
                                                                   else ())],
                         capture_output=True, text=True, cwd=tmp_path, env=without_dask, timeout=120)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert "Traceback" not in res.stderr and lines[-1].startswith(("error: ", "referee: error: ")), res.stderr
    assert "needs Dask" in lines[-1], res.stderr
    assert "pip install -e '.[dask]'" in lines[-1] and "pip install 'referee[dask]'" not in res.stderr
