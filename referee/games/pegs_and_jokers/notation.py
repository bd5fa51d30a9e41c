"""Action text of Pegs and Jokers: structured values with ``Action.from_text`` / ``text()``.

Grammar (exact; one space after the card, no other spaces)::

    action   = play | discard
    play     = card " " part [ "," part ]        ; two parts only for a 7 split
    part     = colour ":" position "-" position  ; the peg of that colour at the
                                                 ; first position moves to the second
    discard  = "discard " card
    position = "S" | "T" hole | "H" 1..5         ; start, track hole, home hole
    colour   = seat number whose pegs move (decimal, no leading zero)

Examples: ``KH 2:S-T44`` (king: bring a peg of colour 2 out), ``7C 0:T10-T11,0:T20-T25``
(a 7 split, parts in the order made), ``8D 1:T30-T22``, ``JK 3:T60-T12``,
``5S 0:T1-H2``, ``discard 5S``.

``Action.from_text`` checks the grammar only (``InvalidAction`` otherwise) and
``value.text()`` writes the text back (``referee.games.base.ParsedAction``);
whether the action is legal now is the engine's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..base import InvalidAction, ParsedAction
from ..cards import parse_card

JOKERS = ("JK",)

_NUM = r"(?:0|[1-9][0-9]{0,3})"
_POS = rf"(?:S|T{_NUM}|H[1-5])"
_PART = rf"({_NUM}):({_POS})-({_POS})"
_PLAY = re.compile(rf"(\S\S) {_PART}(?:,{_PART})?")
_DISCARD = re.compile(r"discard (\S\S)")


@dataclass(frozen=True, slots=True)
class Step:
    """One peg of ``colour`` moving from ``src`` to ``dst`` (position texts)."""

    colour: int
    src: str
    dst: str

    def text(self) -> str:
        return f"{self.colour}:{self.src}-{self.dst}"


class Action(ParsedAction):
    """A Pegs and Jokers action: a ``Play`` or a ``Discard``."""

    __slots__ = ()
    card: str  # both kinds have one (a field of each subclass)

    @classmethod
    def _parse(cls, text: object) -> Action:
        if not isinstance(text, str):
            raise InvalidAction(f"action must be text, not {type(text).__name__}")
        m = _DISCARD.fullmatch(text)
        if m:
            return Discard(parse_card(m.group(1), JOKERS))
        m = _PLAY.fullmatch(text)
        if not m:
            raise InvalidAction(
                f"not a Pegs and Jokers action: {text!r} "
                "(expected e.g. 'KH 2:S-T44', '7C 0:T10-T11,0:T20-T25' or 'discard 5S')"
            )
        card = parse_card(m.group(1), JOKERS)
        steps = [Step(int(m.group(2)), m.group(3), m.group(4))]
        if m.group(5) is not None:
            if card[0] != "7":
                raise InvalidAction(f"only a 7 may be split into two parts: {text!r}")
            steps.append(Step(int(m.group(5)), m.group(6), m.group(7)))
        return Play(card, tuple(steps))


@dataclass(frozen=True, slots=True)
class Play(Action):
    """Play ``card`` face up and move: one step, or two for a 7 split (in order made)."""

    card: str
    steps: tuple[Step, ...]

    def text(self) -> str:
        return self.card + " " + ",".join(s.text() for s in self.steps)


@dataclass(frozen=True, slots=True)
class Discard(Action):
    """Discard ``card`` face up without moving (PJ-4.3)."""

    card: str

    def text(self) -> str:
        return "discard " + self.card
