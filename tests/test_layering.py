"""The architecture's dependency rules, checked on the source.

games/ and protocol/ are leaves: pure, synchronous, no I/O frameworks.
sample_bots use at most `protocol`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out


def top(name: str) -> str:
    return name.split(".")[0]


FORBIDDEN = {
    "referee/games": {"trio", "structlog", "logging", "protocol", "asyncio", "time", "datetime",
                      "tournaments", "subprocess", "pydantic"},
    "protocol": {"trio", "structlog", "logging", "referee", "tournaments", "asyncio", "subprocess"},
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_pure_packages_import_no_io_frameworks(package):
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    bad = []
    for f in files:
        for mod in imported_modules(f):
            if top(mod) in FORBIDDEN[package]:
                bad.append(f"{f.relative_to(ROOT)} imports {mod}")
    assert not bad, "\n".join(bad)


def test_games_do_not_reach_into_the_match_layer():
    for f in (ROOT / "referee/games").rglob("*.py"):
        for mod in imported_modules(f):
            assert not mod.startswith(("referee.match", "referee.cli")), f"{f}: {mod}"


def test_sample_bots_use_at_most_the_protocol_package():
    for f in (ROOT / "sample_bots").rglob("*.py"):
        for mod in imported_modules(f):
            assert top(mod) not in {"referee", "tournaments", "trio"}, f"{f.relative_to(ROOT)} imports {mod}"


def test_random_bot_is_standard_library_only():
    import sys

    mods = {top(m) for m in imported_modules(ROOT / "sample_bots/random_bot.py")}
    assert mods <= set(sys.stdlib_module_names), mods
