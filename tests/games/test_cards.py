"""The one seeded shuffle (RULES.md 0.4): pinned values, so a seed deals the same
cards on every Python version.

The pinned values are what ``random.Random(seed).shuffle`` and ``randrange``
gave on CPython 3.11, where ``referee.games.cards`` took its algorithm from; a
Python whose ``random.shuffle`` changes must not change them.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from referee.games.cards import randbelow, shuffle


def test_a_seeded_shuffle_is_pinned():
    items = list(range(54))
    rng = random.Random(0)
    shuffle(items, rng)
    assert items == [
        29, 12, 40, 43, 33, 7, 5, 38, 1, 51, 35, 0, 4, 42, 20, 14, 53, 44, 47, 46, 41, 11, 3, 17, 15, 10, 21,
        27, 28, 50, 23, 36, 45, 9, 34, 49, 6, 39, 18, 8, 52, 13, 37, 22, 30, 19, 25, 31, 32, 16, 2, 26, 48, 24,
    ]
    assert rng.getrandbits(32) == 3136522618, "the shuffle draws exactly the pinned bits"


def test_shuffles_of_every_deck_size_are_pinned():
    """Sizes of the decks and piles the games shuffle: the 54 of Back Alley, the 53
    of Schmier, 162 and 216 of Pegs and Jokers (and the smallest, 2 and 3)."""
    h = hashlib.sha256()
    for size in (2, 3, 53, 54, 162, 216):
        for seed in range(20):
            items = list(range(size))
            rng = random.Random(seed)
            shuffle(items, rng)
            assert sorted(items) == list(range(size))
            h.update(repr((items, rng.getrandbits(32))).encode())
    assert h.hexdigest() == "58f785ba4adf2ee1ec8839e0123897a1f67b579e538429b15b6243349ff3e154"


def test_shuffling_nothing_or_one_card_draws_nothing():
    for items in ([], ["AS"]):
        rng = random.Random(3)
        before = rng.getstate()
        shuffle(items, rng)
        assert rng.getstate() == before


def test_randbelow_is_pinned_and_in_range():
    rng = random.Random(5)
    assert [randbelow(rng, n) for n in (1, 2, 3, 4, 5, 6, 7, 8, 100, 2**31, 2**40)] == [
        0, 1, 2, 0, 3, 1, 5, 0, 20, 486215926, 1032388991359,
    ]
    rng = random.Random(9)
    for n in (1, 2, 3, 6, 8):
        seen = {randbelow(rng, n) for _ in range(400)}
        assert seen == set(range(n))


@pytest.mark.parametrize("n", [0, -1])
def test_randbelow_refuses_an_empty_range(n):
    with pytest.raises(ValueError):
        randbelow(random.Random(0), n)
