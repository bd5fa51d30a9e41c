"""The architecture's dependency rules, checked on the source.

games/ and protocol/ are leaves: pure, synchronous, no I/O frameworks.
sample_bots use at most `protocol`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def package_of(path: Path, root: Path = ROOT) -> list[str]:
    """The package a file's relative imports start from: its folder (``a/b/c.py`` and
    ``a/b/__init__.py`` alike are in ``a.b``)."""
    return list(path.relative_to(root).parts[:-1])


def imported_modules(path: Path, root: Path = ROOT) -> set[str]:
    """Every module a file imports, relative imports resolved (``from ..match import x``
    in ``referee/games/a.py`` is ``referee.match`` and, in case ``x`` is a module,
    ``referee.match.x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = package_of(path, root)
                base = package[: len(package) - (node.level - 1)]
                assert node.level - 1 < len(package), f"{path}: relative import above the top package"
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names if alias.name != "*")
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
        bad.extend(f"{f.relative_to(ROOT)} imports {mod}" for mod in imported_modules(f)
                   if top(mod) in FORBIDDEN[package])
    assert not bad, "\n".join(bad)


def test_games_do_not_reach_into_the_match_layer():
    for f in (ROOT / "referee/games").rglob("*.py"):
        for mod in imported_modules(f):
            assert not mod.startswith(("referee.match", "referee_cli")), f"{f}: {mod}"


#: Trainers beside the sample bots: they run in-process, not as bots, and may use the
#: learning environment (referee.env) but nothing else of the referee.
TRAINERS = {"sample_bots/learning/train.py"}


#: What a bot may import of the project: the bot helper and the pure game engines, the only
#: parts the sandbox shows it (referee.match.bubblewrap ENGINE_PATHS); a search bot samples
#: and plays out states with the engines (sample_bots/search/).
ENGINES = ("referee.games", "referee.errors")


def test_sample_bots_use_at_most_the_protocol_package_and_the_engines():
    for f in (ROOT / "sample_bots").rglob("*.py"):
        trainer = str(f.relative_to(ROOT)) in TRAINERS
        for mod in imported_modules(f):
            if trainer and (mod == "referee.env" or mod.startswith("referee.env.")):
                continue
            if mod in ENGINES or mod.startswith(tuple(f"{e}." for e in ENGINES)):
                continue
            assert top(mod) not in {"referee", "referee_cli", "tournaments", "trio"}, \
                f"{f.relative_to(ROOT)} imports {mod}"


def test_what_bots_may_import_of_the_referee_is_what_the_sandbox_shows():
    from referee.match.bubblewrap import ENGINE_PATHS

    shown = {p.relative_to(ROOT).as_posix() for p in ENGINE_PATHS}
    assert shown == {"referee/__init__.py", "referee/errors.py", "referee/games"}
    # The engines import nothing else of the referee, or a bot importing them would fail in its sandbox.
    for f in (ROOT / "referee/games").rglob("*.py"):
        for mod in imported_modules(f):
            if top(mod) == "referee":
                assert mod.startswith(ENGINES) or mod == "referee", f"{f.relative_to(ROOT)} imports {mod}"


def test_random_bot_is_standard_library_only():
    import sys

    mods = {top(m) for m in imported_modules(ROOT / "sample_bots/random_bot.py")}
    assert mods <= set(sys.stdlib_module_names), mods


@pytest.mark.parametrize(("where", "source", "expected"), [
    ("referee/games/schmier/rules.py", "from ...match.runner import run_match", "referee.match.runner"),
    ("referee/games/schmier/rules.py", "from ... import match", "referee.match"),
    ("referee/games/__init__.py", "from ..cli import main", "referee.cli"),
    ("referee/games/base.py", "from referee import cli", "referee.cli"),
    ("referee/games/base.py", "import protocol.codec", "protocol.codec"),
])
def test_the_import_reader_sees_relative_and_from_imports(tmp_path, where, source, expected):
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source + "\n")
    assert expected in imported_modules(path, root=tmp_path)


#: The house, bottom to top: a package may import those below it, never one above.
#: ``referee_cli`` (the command) is the roof that nothing imports.
LAYERS = {"protocol": 0, "referee": 1, "tournaments": 2, "referee_cli": 3}
#: Entry scripts: ``python -m referee`` runs the command; nothing imports it.
ENTRIES = {"referee/__main__.py"}


def package_arrows(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """Every import from one of the house's packages into another, lazy ones in
    functions too: (from, to) -> the files that draw it."""
    arrows: dict[tuple[str, str], list[str]] = {}
    for package in LAYERS:
        for f in sorted((root / package).rglob("*.py")):
            name = f.relative_to(root).as_posix()
            for mod in imported_modules(f, root):
                if (to := top(mod)) in LAYERS and to != package:
                    arrows.setdefault((package, to), []).append(name)
    return {k: sorted(set(v)) for k, v in arrows.items()}


def test_no_package_imports_one_above_it_and_nothing_imports_the_command():
    up = [f"{a} -> {b} in {', '.join(f for f in files if f not in ENTRIES)}"
          for (a, b), files in package_arrows().items()
          if LAYERS[b] > LAYERS[a] and any(f not in ENTRIES for f in files)]
    assert not up, "arrows back up:\n" + "\n".join(up)


def test_the_arrow_reader_sees_an_arrow_back_up(tmp_path):
    for package in LAYERS:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "tournaments" / "x.py").write_text("def f():\n    from referee_cli.main import main\n")
    (tmp_path / "referee" / "y.py").write_text("from tournaments import runner\n")
    (tmp_path / "referee" / "__main__.py").write_text("from referee_cli.main import main\n")
    arrows = package_arrows(tmp_path)
    assert arrows[("tournaments", "referee_cli")] == ["tournaments/x.py"]
    assert arrows[("referee", "tournaments")] == ["referee/y.py"]
    assert arrows[("referee", "referee_cli")] == ["referee/__main__.py"]  # an entry: allowed by name only
