"""The game registry: every listed name is its engine's ``SPEC.name``, lookups behave as a
read-only dict's, and listing or looking up one game imports no other game's engine."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from referee.games import _PACKAGES, GAMES, GameSpec, InvalidOptions, get_game

ENGINES = {name: package for name, package in _PACKAGES.items()}


def test_each_name_is_the_name_its_engine_gives_itself():
    for name, package in ENGINES.items():
        spec = importlib.import_module(package).SPEC
        assert spec.name == name
        assert GAMES[name] is spec is get_game(name)
        assert isinstance(spec, GameSpec)


def test_the_registry_reads_like_a_dict():
    assert sorted(GAMES) == ["back-alley", "pegs-and-jokers", "schmier"]
    assert len(GAMES) == 3
    assert "schmier" in GAMES and "chess" not in GAMES and 3 not in GAMES
    assert GAMES.get("chess") is None
    assert dict(GAMES.items()) == {name: get_game(name) for name in ENGINES}
    with pytest.raises(KeyError):
        GAMES["chess"]
    with pytest.raises(TypeError):
        GAMES["chess"] = GAMES["schmier"]  # type: ignore[index]


def test_an_unknown_game_is_one_error_naming_the_known_ones():
    with pytest.raises(InvalidOptions, match=r"^unknown game 'chess' \(known: back-alley, pegs-and-jokers, schmier\)$"):
        get_game("chess")


ENGINE_MODULES = tuple(ENGINES.values())

LOADED = """
import sys
{body}
print(" ".join(sorted(m for m in sys.modules if m.startswith({engines!r}))))
"""


def loaded_engines(body: str) -> set[str]:
    code = LOADED.format(body=body, engines=ENGINE_MODULES)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return {m for m in res.stdout.split() if m in ENGINE_MODULES}


def test_listing_the_games_imports_no_engine():
    assert loaded_engines("from referee.games import GAMES, get_game\n"
                          "assert sorted(GAMES) and 'schmier' in GAMES and len(GAMES) == 3\n"
                          "try:\n    get_game('chess')\nexcept Exception:\n    pass\n") == set()


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_looking_up_one_game_imports_only_its_engine(name):
    assert loaded_engines(f"from referee.games import get_game\nget_game({name!r})") == {ENGINES[name]}
