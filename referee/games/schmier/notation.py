"""Action text of Schmier (RULES.md §2) and its parsed form.

Every action is one short string:

* ``"pass"`` or a bid ``"3"`` … ``"6"`` (decision ``bid``);
* a suit letter ``"C" "D" "H" "S"`` (decision ``trump``);
* a card such as ``"TS"`` or ``"JK"`` (decisions ``discard``, ``dealer_discard``
  and ``play``);
* ``"done"`` (decision ``discard``: stop discarding and draw).

``Action.from_text`` turns text into an ``Action`` and raises
``InvalidAction`` for text that is no Schmier action at all; ``value.text()``
is its inverse (``referee.games.base.ParsedAction``).  Whether a well-formed
action is legal *now* is the state's business (``IllegalAction``).  A bid is
well formed for any decimal number without a leading zero, so ``"7"`` parses
(and is refused as illegal) while ``"07"`` does not parse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..base import InvalidAction, ParsedAction
from ..cards import RANKS, SUITS

#: The 53 Schmier cards as text, in the engine's internal order:
#: index ``suit * 13 + rank`` (suits C D H S, ranks 2 … A), then ``JK`` (52).
CARDS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS) + ("JK",)
CARD_INDEX: dict[str, int] = {c: i for i, c in enumerate(CARDS)}
JOKER = "JK"

Kind = Literal["pass", "bid", "trump", "card", "done"]


@dataclass(frozen=True, slots=True)
class Action(ParsedAction):
    """A parsed action: ``kind`` plus the bid number, suit letter or card text."""

    kind: Kind
    value: int | str | None = None

    @classmethod
    def _parse(cls, text: object) -> Action:
        if not isinstance(text, str):
            raise InvalidAction(f"an action is a string, not {type(text).__name__}")
        if text == "pass":
            return cls("pass")
        if text == "done":
            return cls("done")
        if text in CARD_INDEX:
            return cls("card", text)
        if len(text) == 1 and text in SUITS:
            return cls("trump", text)
        if text.isascii() and text.isdigit() and (text == "0" or text[0] != "0") and len(text) < 6:
            return cls("bid", int(text))
        raise InvalidAction(f"not a Schmier action: {text!r}")

    def text(self) -> str:
        if self.kind in ("pass", "done"):
            return self.kind
        return str(self.value)
