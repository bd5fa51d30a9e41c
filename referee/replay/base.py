"""The renderer contract: pure text from typed record entries.

A renderer turns the entries of a match record (``referee.match.record``:
``EventLine``, ``DecisionLine``, ``FaultLine``, ``ReadyLine``) into the
score table printed by ``referee play`` and ``referee replay`` and into the
replay's lines.  Renderers read the events only, so they also draw a record
filtered for one seat (``entries_for_seat``: the events that seat may see and
its own decisions) and a truncated one (a killed game).  An event's payload is
the engine's JSON: a record from elsewhere may hold odd payloads, and a
renderer shows ``?`` for what it cannot read, never raises.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from referee.match.record import Entry, EventLine
from referee.tables import Col


def seq(value: Any) -> list[Any]:
    """``value`` if it is a list (as an event's list fields are), else empty."""
    return value if isinstance(value, list) else []


def words(value: Any, sep: str = " ") -> str:
    """The items of a list field as text (``"AS KH"``); empty for anything else."""
    return sep.join(str(x) for x in seq(value))


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is an object (a dict), else empty."""
    return value if isinstance(value, dict) else {}


def integer(value: Any) -> int | None:
    """``value`` if it is an integer (not a bool), else ``None``."""
    return value if type(value) is int else None


def events(entries: Sequence[Entry]) -> Iterator[dict[str, Any]]:
    """The event payloads among ``entries``, in order."""
    for entry in entries:
        if isinstance(entry, EventLine):
            yield entry.event


class Renderer(abc.ABC):
    #: How a replay is cut into parts: ``"deal"`` (card games, ``--deal K``) or
    #: ``"turn"`` (Pegs and Jokers: one deal, ``--turn N`` / ``--turns A-B``).
    unit: ClassVar[str] = "deal"

    @abc.abstractmethod
    def score_table(self, entries: Sequence[Entry]) -> tuple[list[str], list[list[str]]]:
        """Header and rows of the deal-by-deal (or game summary) score table."""

    def score_columns(self, header: Sequence[str]) -> list[Col]:
        """How each column of ``score_table`` is shown when the screen is narrow
        (``referee.tables``): the first names the row and is in every part; the others
        are kept in their order."""
        return [Col(h, "left" if i == 0 else "right", key=i == 0, rank=i) for i, h in enumerate(header)]

    #: A line under the score table explaining its short headers, if it has any.
    score_legend: ClassVar[str | None] = None

    @abc.abstractmethod
    def render(
        self,
        entries: Sequence[Entry],
        *,
        seat: int | None = None,
        deal: int | None = None,
    ) -> list[str]:
        """Readable lines for a replay: deal by deal, trick by trick (or turn by turn)."""


class TurnRenderer(Renderer):
    """A renderer of a game played in numbered turns, which can show a range of them."""

    unit: ClassVar[str] = "turn"

    @abc.abstractmethod
    def render(
        self,
        entries: Sequence[Entry],
        *,
        seat: int | None = None,
        deal: int | None = None,
        turns: tuple[int, int] | None = None,
        board_every: int | None = None,
    ) -> list[str]:
        """As ``Renderer.render``; ``turns`` = (first, last) shows only those turns,
        ``board_every`` = K draws the whole board every K turns instead of the parts
        that changed after each move."""
