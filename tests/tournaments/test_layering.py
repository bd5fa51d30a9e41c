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
        assert "referee_cli" not in path.read_text(encoding="utf-8"), path.name


def _module_imports(path: Path) -> set[str]:
    """The tournaments modules ``path`` imports, anywhere in it (a function's lazy import too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
            elif node.level == 0 and node.module and node.module.startswith("tournaments."):
                names = [node.module.removeprefix("tournaments.")]
            elif node.level == 0 and node.module == "tournaments":
                names = [a.name for a in node.names]
            else:
                continue
            out.update(n.split(".")[0] for n in names)
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("tournaments."))
    return out


def test_the_tournaments_modules_import_each_other_without_a_circle():
    modules = {p.stem: p for p in (ROOT / "tournaments").glob("*.py") if p.stem != "__init__"}
    graph = {m: _module_imports(p) & set(modules) - {m} for m, p in modules.items()}
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            assert state.get(n) != 1, "an import circle: " + " -> ".join([*path[path.index(n):], n])
            if n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert "html_report" not in graph["report"] and not graph["executors"] & {"workers", "dask_executor"}
