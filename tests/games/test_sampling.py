"""The constrained deal every determinizer uses (referee/games/sampling.py)."""

from __future__ import annotations

import collections
import itertools
import random

import pytest

from referee.games import InconsistentView
from referee.games.sampling import constrained_deal

POOL = ["a", "b", "c", "d", "e", "f"]
SIZES = [2, 2, 2]
REFUSED = [frozenset("ab"), frozenset("c"), frozenset()]


def all_consistent_deals():
    out = set()
    for perm in itertools.permutations(POOL):
        bins = (frozenset(perm[0:2]), frozenset(perm[2:4]), frozenset(perm[4:6]))
        if all(not (b & r) for b, r in zip(bins, REFUSED, strict=True)):
            out.add(bins)
    return out


@pytest.mark.parametrize("tries", [12, 0], ids=["rejection", "matching-and-swap-chain"])
def test_deals_are_consistent_and_about_uniform(tries):
    deals = all_consistent_deals()
    assert len(deals) == 27
    rng = random.Random(5)
    counts = collections.Counter()
    for _ in range(10_000):
        out = constrained_deal(POOL, SIZES, REFUSED, rng, tries=tries)
        key = tuple(frozenset(b) for b in out)
        assert key in deals
        counts[key] += 1
    assert set(counts) == deals
    for n in counts.values():  # 370 expected each; sd about 19
        assert 280 < n < 460, counts


def test_a_deal_needs_the_sizes_to_add_up():
    with pytest.raises(InconsistentView):
        constrained_deal(POOL, [2, 2, 3], REFUSED, random.Random(0))
    with pytest.raises(InconsistentView):
        constrained_deal(POOL, [4, 4, -2], REFUSED, random.Random(0))


def test_constraints_no_deal_meets_raise_at_once_even_when_each_card_fits_somewhere():
    # a, b, c all refused by bins 0 and 1: three cards for bin 2's two places.
    refused = [frozenset("abc"), frozenset("abc"), frozenset()]
    with pytest.raises(InconsistentView, match="no deal"):
        constrained_deal(POOL, SIZES, refused, random.Random(0))
    with pytest.raises(InconsistentView, match="fits in no"):
        constrained_deal(POOL, SIZES, [frozenset("a")] * 3, random.Random(0))


def test_bins_that_refuse_the_same_cards_are_cut_apart_at_their_sizes():
    rng = random.Random(1)
    pool = [str(i) for i in range(20)]
    refused = [frozenset({"0", "1"}), frozenset({"0", "1"}), frozenset(), frozenset()]
    for _ in range(200):
        out = constrained_deal(pool, [3, 5, 7, 5], refused, rng)
        assert [len(b) for b in out] == [3, 5, 7, 5]
        assert sorted(c for b in out for c in b) == sorted(pool)
        assert not {"0", "1"} & set(out[0] + out[1])


def test_the_same_generator_state_gives_the_same_deal_and_repeated_cards_are_kept():
    pool = ["JK"] * 4 + ["AS"] * 3 + ["2C"] * 5
    refused = [frozenset({"JK"}), frozenset(), frozenset({"AS"})]
    a = constrained_deal(pool, [4, 4, 4], refused, random.Random(9), tries=0)
    b = constrained_deal(pool, [4, 4, 4], refused, random.Random(9), tries=0)
    assert a == b
    assert sorted(c for x in a for c in x) == sorted(pool)
    assert "JK" not in a[0] and "AS" not in a[2]
