"""The one card notation of the project (RULES.md §0.3).

A card is a two-character string, rank then suit: ``"TS"`` is the ten of
spades.  Jokers are ``"BJ"``/``"LJ"`` (Back Alley) and ``"JK"`` (Schmier,
Pegs and Jokers).  Engines may use other internal encodings on hot paths but
every card that crosses an engine boundary is one of these strings.
"""

from __future__ import annotations

from .base import InvalidAction

RANKS = "23456789TJQKA"
SUITS = "CDHS"
JOKERS = ("BJ", "LJ", "JK")
RED_SUITS = frozenset("DH")
BLACK_SUITS = frozenset("CS")
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}

#: 0 for "2" … 12 for "A".
RANK_INDEX = {r: i for i, r in enumerate(RANKS)}

STANDARD_DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)


def rank(card: str) -> str:
    return card[0]


def suit(card: str) -> str:
    return card[1]


def is_joker(card: str) -> bool:
    return card in JOKERS


def same_colour_suit(s: str) -> str:
    """The other suit of the same colour (C<->S, D<->H)."""
    return {"C": "S", "S": "C", "D": "H", "H": "D"}[s]


def is_card(text: str, jokers: tuple[str, ...] = JOKERS) -> bool:
    return (
        len(text) == 2 and text[0] in RANK_INDEX and text[1] in SUITS
    ) or text in jokers


def parse_card(text: str, jokers: tuple[str, ...] = JOKERS) -> str:
    """Validate card text; raise ``InvalidAction`` if it is not a card."""
    if not isinstance(text, str) or not is_card(text, jokers):
        raise InvalidAction(f"not a card: {text!r}")
    return text


def format_cards(cards) -> str:
    return " ".join(cards)
