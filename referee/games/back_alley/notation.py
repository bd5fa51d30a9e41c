"""Back Alley action text (RULES.md BA-5, BA-8).

Two decision kinds, two action forms:

* ``"bid"``: ``"pass"``, a number ``"1"`` … ``"12"`` (canonical decimal, no
  sign, no leading zero) or ``"board"``;
* ``"play"``: a card in the project notation, ``"AS"``, ``"TD"``, ``"BJ"``,
  ``"LJ"`` (``referee.games.cards``).

``Action.from_text`` turns text into a small value (``Bid`` or ``Play``) and
raises ``InvalidAction`` for text that is neither; ``value.text()`` is its
inverse (``referee.games.base.ParsedAction``).  Whether a well-formed action
is *legal now* is the state's business.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base import InvalidAction, ParsedAction
from ..cards import STANDARD_DECK

JOKERS = ("BJ", "LJ")
#: The 54 cards of BA-1.
DECK: tuple[str, ...] = STANDARD_DECK + JOKERS
CARD_SET = frozenset(DECK)


def is_number_text(text: str) -> bool:
    """Canonical decimal: ``"7"``, ``"12"``; not ``"07"``, ``"+7"``, ``"٧"``."""
    return text.isascii() and text.isdigit() and (text == "0" or text[0] != "0")


class Action(ParsedAction):
    """A Back Alley action: a ``Bid`` or a ``Play``."""

    __slots__ = ()

    @classmethod
    def _parse(cls, text: object) -> Action:
        if isinstance(text, str):
            if text in CARD_SET:
                return Play(text)
            if text == "pass" or text == "board":
                return Bid(text)
            if len(text) <= 3 and is_number_text(text):
                return Bid(int(text))
        raise InvalidAction(f"not a Back Alley action: {text!r} (expected a card, 'pass', 'board' or a number)")


@dataclass(frozen=True, slots=True)
class Bid(Action):
    """``value`` is ``"pass"``, ``"board"`` or a trick count (int)."""

    value: str | int

    def text(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Play(Action):
    card: str

    def text(self) -> str:
        return self.card
