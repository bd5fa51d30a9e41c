"""docs/learning.md stays true: its encoding tables are the encodings' fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from protocol.encoding import encoding_for

DOC = (Path(__file__).resolve().parents[2] / "docs" / "learning.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `(\w+)` \| (\d+) \| (\d+) \| (-?\d+) … (-?\d+) \| (.*) \|$")


def table(title: str) -> list[tuple]:
    section = DOC[DOC.index(title):]
    section = section[: section.index("\n\n", section.index("|---|"))]
    return [m.groups() for line in section.splitlines() if (m := ROW.match(line))]


@pytest.mark.parametrize(("title", "game", "opts"), [
    ("### Back Alley", "back-alley", {}),
    ("### Schmier", "schmier", {}),
    ("### Pegs and Jokers (4 players", "pegs-and-jokers", {"players": 4}),
])
def test_the_encoding_tables_are_the_encodings_fields(title, game, opts):
    enc = encoding_for(game, opts)
    want = [(name, str(off), str(size), str(enc.low[off]), str(enc.high[off]), enc.layout.notes[name])
            for name, (off, size) in enc.fields.items()]
    assert table(title) == want
    assert f"{enc.size} entries" in DOC[DOC.index(title):][:200]


def test_the_sizes_of_the_larger_pegs_and_jokers_boards_are_the_encodings():
    for players, text in ((6, "1,379 entries for 6 players"), (8, "2,045 for 8")):
        size = encoding_for("pegs-and-jokers", {"players": players}).size
        assert f"{size:,}" in text and text in DOC
