from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee.match.types import BotSpec

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
LISTENER = ROOT / "tests" / "fixtures" / "listening_bot.py"


def random_bot(seed: int | None = None, name: str = "random") -> BotSpec:
    argv = [sys.executable, str(RANDOM_BOT)] + ([str(seed)] if seed is not None else [])
    return BotSpec(name=name, command=tuple(argv))


def listener(slow_n: int = 0, slow_s: float = 0.0) -> BotSpec:
    """A bot that logs every line it gets to its stderr: read it with ``listener_log``."""
    return BotSpec(name="listener", command=(sys.executable, str(LISTENER), str(slow_n), str(slow_s)))


def listener_log(stderr_dir: Path, seat: int) -> list[str]:
    """The lines the listener at ``seat`` received (its stderr log, kept by the referee)."""
    return (stderr_dir / f"seat{seat}-listener.log").read_text().splitlines()


@pytest.fixture
def seeded_random_bots():
    return [random_bot(seed=100 + s) for s in range(4)]
