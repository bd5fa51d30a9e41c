"""The pure parts of tournaments/ stay pure: no Trio, no logging, no terminal UI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURE = ["config", "schedule", "results", "stats", "standings"]
FORBIDDEN = {"trio", "structlog", "logging", "rich", "typer", "subprocess", "asyncio"}


def imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("module", PURE)
def test_pure_tournament_modules_import_no_io_frameworks(module):
    found = imports(ROOT / "tournaments" / f"{module}.py") & FORBIDDEN
    assert not found, f"tournaments/{module}.py imports {sorted(found)}"


def test_tournaments_never_import_the_cli():
    for path in (ROOT / "tournaments").glob("*.py"):
        assert "referee.cli" not in path.read_text(encoding="utf-8"), path.name
