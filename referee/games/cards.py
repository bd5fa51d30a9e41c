"""The one card notation of the project (RULES.md §0.3).

A card is a two-character string, rank then suit: ``"TS"`` is the ten of
spades.  Jokers are ``"BJ"``/``"LJ"`` (Back Alley) and ``"JK"`` (Schmier,
Pegs and Jokers).  Engines may use other internal encodings on hot paths but
every card that crosses an engine boundary is one of these strings.

It also holds the one shuffle of the project (RULES.md 0.4): ``shuffle`` and
``randbelow`` draw from a seeded ``random.Random`` through ``getrandbits``
only, so a seed deals the same cards on every Python version.
"""

from __future__ import annotations

import random
from functools import cache

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


# --- the seeded shuffle (RULES.md 0.4) ----------------------------------------
# ``random.Random.shuffle`` and ``randrange`` are not promised to stay the same
# across Python versions; ``getrandbits(k)`` for k ≤ 32 is the top k bits of one
# Mersenne Twister word, which is.  The algorithm below is the one CPython's
# ``shuffle`` and ``randrange(n)`` used when it was written (3.11: Fisher–Yates
# from the end, each index by rejection sampling on ``n.bit_length()`` bits), so
# the games seeded before it deal the same cards; tests/games/test_cards.py pins it.


def randbelow(rng: random.Random, n: int) -> int:
    """A uniform integer ``0 <= r < n``: ``n.bit_length()`` bits, drawn again until below ``n``."""
    if n < 1:
        raise ValueError(f"randbelow needs n >= 1, got {n}")
    getrandbits = rng.getrandbits
    k = n.bit_length()
    r = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


@cache
def _swaps(size: int) -> tuple[tuple[int, int, int], ...]:
    """``(i, n, k)`` per step of a shuffle of ``size`` items: index ``i`` swaps with
    ``randbelow(n = i + 1)``, which draws ``k = n.bit_length()`` bits at a time."""
    return tuple((i, i + 1, (i + 1).bit_length()) for i in range(size - 1, 0, -1))


def shuffle(items: list, rng: random.Random) -> None:
    """Shuffle ``items`` in place with ``rng``: Fisher–Yates with ``randbelow`` (inlined)."""
    getrandbits = rng.getrandbits
    for i, n, k in _swaps(len(items)):
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]
