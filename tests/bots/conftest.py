"""Bots of every language, as BotSpecs for real games through the referee."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.match.types import BotSpec

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots"

#: game -> options for a real game, and how many seats it has
GAMES = {"back-alley": ({}, 4), "schmier": ({}, 6), "pegs-and-jokers": ({"players": 4}, 4)}
HEURISTIC = {
    "back-alley": BOTS / "heuristic" / "back_alley.py",
    "schmier": BOTS / "heuristic" / "schmier.py",
    "pegs-and-jokers": BOTS / "heuristic" / "pegs_and_jokers.py",
}


def python_bot(path: Path, *args: str, name: str | None = None) -> BotSpec:
    return BotSpec(name=name or path.stem, command=(sys.executable, str(path), *args))


def random_bot(seed: int) -> BotSpec:
    return python_bot(BOTS / "random_bot.py", str(seed), name="random")


@pytest.fixture(scope="session")
def node() -> str:
    exe = shutil.which("node") or shutil.which("nodejs")
    if exe is None:
        pytest.skip("Node.js is not installed (node/nodejs not on PATH); .ci/run installs it")
    return exe


@pytest.fixture(scope="session")
def c_random_bot(tmp_path_factory) -> Path:
    """The C bot, built with the documented command into a temporary folder."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler (cc not on PATH); .ci/run installs one")
    exe = tmp_path_factory.mktemp("c-bot") / "random_bot"
    subprocess.run([cc, "-std=c99", "-O2", "-o", str(exe), str(BOTS / "c" / "random_bot.c")],
                   check=True, capture_output=True, text=True)
    return exe
