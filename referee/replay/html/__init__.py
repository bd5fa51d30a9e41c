"""The HTML replay: one self-contained page to step through a recorded game.

``write_html(rec, path)`` walks the record (``frames.build_replay``;
``RecordDiverged`` if it and the engine disagree) and writes ``path``: the
frames as embedded JSON, drawn by the hand-written ``assets/replay.js`` with
``assets/replay.css`` around ``assets/replay.html`` (package data), put
together by ``page.self_contained_page``.  The page makes no network request.
docs/html-replay.md describes what it shows.
"""

from __future__ import annotations

from pathlib import Path

from referee.match.record import Record
from referee.match.walk import RecordDiverged

from .frames import build_replay, card_face
from .page import asset, escape, fill, self_contained_page

_PACKAGE = __name__


def render_html(rec: Record) -> str:
    data = build_replay(rec)
    header = rec.header
    seats = ", ".join(f"{s.seat}: {name}" for s, name in zip(header.seats, rec.names, strict=True))
    title = f"{data['title']} replay — seed {header.seed}"
    body = fill(asset(_PACKAGE, "assets/replay.html"), title=escape(title),
                subtitle=escape(f"{rec.path.name} · rules {header.rules_version or '?'} · seats {seats}"))
    return self_contained_page(title, body, css=asset(_PACKAGE, "assets/replay.css"),
                               js=asset(_PACKAGE, "assets/replay.js"), data=data)


def write_html(rec: Record, path: Path) -> None:
    path.write_text(render_html(rec), encoding="utf-8")


__all__ = ["RecordDiverged", "build_replay", "card_face", "render_html", "write_html"]
