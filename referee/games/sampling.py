"""Dealing unknown cards under constraints: the core of every determinizer.

A determinizer knows which cards are unseen (the *pool*) and where they can
be: into bins (another seat's hand, the stock, a draw pile) of known sizes,
each bin refusing some card values (a suit the seat showed void in, trumps
above one it was forced to play, ...).  ``constrained_deal`` deals the pool
into the bins so that every bin gets exactly its size and no refused card.

How the deal is drawn
---------------------
1. *Rejection*: shuffle the pool, cut it into the bins, keep it if no bin got
   a refused card; up to ``tries`` times.  An accepted deal is exactly
   uniform among the consistent deals (each consistent deal is one of the
   equally likely cuts).
2. Otherwise *construction plus mixing*: a consistent deal is built greedily
   (the most refusing bins first) or, when that leaves a bin short, by
   bipartite matching with augmenting paths (cards to bins; it exists iff the
   constraints can be met at all, else ``InconsistentView``), then mixed by a
   random-transposition chain that swaps two cards of different bins when
   both may go where the other was.  The chain's stationary law is uniform
   over the deals it can reach, so the result is uniform up to the chain's
   mixing (``mix`` swap attempts per card).

Both steps are bounded (no unbounded retry loop): an impossible view costs
``tries`` shuffles plus one failed matching.  Cards may repeat in the pool
(Pegs and Jokers plays with several decks); equal strings are equal cards.
"""

from __future__ import annotations

import random
from collections.abc import Sequence, Set

from .base import InconsistentView


def constrained_deal(
    pool: Sequence[str],
    sizes: Sequence[int],
    refused: Sequence[Set[str]],
    rng: random.Random,
    *,
    tries: int = 12,
    mix: int = 6,
) -> list[list[str]]:
    """Deal ``pool`` into ``len(sizes)`` bins of ``sizes[b]`` cards, none in ``refused[b]``.

    Raises ``InconsistentView`` when the sizes do not add up to the pool or no
    deal meets the constraints.  Draws only from ``rng``.
    """
    k = len(sizes)
    if len(refused) != k:
        raise ValueError("one refused set per bin")
    if any(n < 0 for n in sizes):
        raise InconsistentView(f"a negative number of unseen cards in a hand or pile: {list(sizes)}")
    if sum(sizes) != len(pool):
        raise InconsistentView(
            f"{len(pool)} unseen cards cannot fill hands and piles of {sum(sizes)} cards"
        )
    # Bins that refuse the same cards are one bin for the deal, cut apart after it
    # (a uniform deal into the merged bin, cut, is a uniform deal into its parts).
    groups: dict[frozenset[str], list[int]] = {}
    for b in range(k):
        if sizes[b]:
            groups.setdefault(frozenset(refused[b]), []).append(b)
    if len(groups) < k:
        keys = list(groups)
        merged = _deal(pool, [sum(sizes[b] for b in groups[r]) for r in keys], keys, rng, tries, mix)
        out: list[list[str]] = [[] for _ in range(k)]
        for r, cards in zip(keys, merged, strict=True):
            start = 0
            for b in groups[r]:
                out[b] = cards[start:start + sizes[b]]
                start += sizes[b]
        return out
    return _deal(pool, sizes, refused, rng, tries, mix)


def _deal(
    pool: Sequence[str],
    sizes: Sequence[int],
    refused: Sequence[Set[str]],
    rng: random.Random,
    tries: int,
    mix: int,
) -> list[list[str]]:
    cards = list(pool)
    bounds = []
    start = 0
    for n in sizes:
        bounds.append((start, start + n))
        start += n
    checked = [(lo, hi, refused[b]) for b, (lo, hi) in enumerate(bounds) if refused[b] and hi > lo]
    if not checked:
        _shuffle(cards, rng)
        return [cards[lo:hi] for lo, hi in bounds]
    # Rejection is worth trying only when a cut is likely enough to fit: the chance
    # that each bin misses its refused cards, taken as independent.
    total = len(cards)
    odds = 1.0
    for lo, hi, ref in checked:
        bad = sum(1 for c in cards if c in ref)
        for i in range(hi - lo):
            odds *= max(0, total - bad - i) / (total - i)
    if odds * tries >= 1:
        for _ in range(tries):
            _shuffle(cards, rng)
            for lo, hi, ref in checked:
                if not ref.isdisjoint(cards[lo:hi]):
                    break
            else:
                return [cards[lo:hi] for lo, hi in bounds]
    return _construct_and_mix(cards, sizes, refused, rng, mix)


def _shuffle(items: list[str], rng: random.Random) -> None:
    """Fisher–Yates from ``rng.random()`` (faster than ``rng.shuffle``; the float's bias is
    below 2**-40 for these sizes).  Samples need not be stable across Python versions."""
    rand = rng.random
    for i in range(len(items) - 1, 0, -1):
        j = int(rand() * (i + 1))
        items[i], items[j] = items[j], items[i]


def _construct_and_mix(
    cards: list[str],
    sizes: Sequence[int],
    refused: Sequence[Set[str]],
    rng: random.Random,
    mix: int,
) -> list[list[str]]:
    k = len(sizes)
    _shuffle(cards, rng)
    n = len(cards)
    where = _greedy(cards, sizes, refused)
    if where is None:
        where = _matching(cards, sizes, refused, rng)
    # Mix: swap two cards of different bins when each may go to the other's bin.
    rand = rng.random
    for _ in range(mix * n):
        i = int(rand() * n)
        j = int(rand() * n)
        bi, bj = where[i], where[j]
        if bi != bj and cards[i] not in refused[bj] and cards[j] not in refused[bi]:
            where[i], where[j] = bj, bi
    out: list[list[str]] = [[] for _ in range(k)]
    for i, b in enumerate(where):
        out[b].append(cards[i])
    for b in range(k):
        _shuffle(out[b], rng)
    return out


def _greedy(cards: list[str], sizes: Sequence[int], refused: Sequence[Set[str]]) -> list[int] | None:
    """A start for the chain: the most refusing bins first, each takes the first cards it
    accepts of the (shuffled) pool; ``None`` if that leaves a bin short."""
    where = [-1] * len(cards)
    order = sorted(range(len(sizes)), key=lambda b: -len(refused[b]))
    for b in order:
        need = sizes[b]
        if not need:
            continue
        ref = refused[b]
        for i, c in enumerate(cards):
            if where[i] < 0 and c not in ref:
                where[i] = b
                need -= 1
                if not need:
                    break
        if need:
            return None
    return where


def _matching(cards: list[str], sizes: Sequence[int], refused: Sequence[Set[str]], rng: random.Random) -> list[int]:
    """A deal by bipartite matching (augmenting paths); ``InconsistentView`` if none exists."""
    k = len(sizes)
    n = len(cards)
    allowed: list[list[int]] = []
    for c in cards:
        bins = [b for b in range(k) if sizes[b] and c not in refused[b]]
        if not bins:
            raise InconsistentView(f"the unseen card {c} fits in no hand or pile")
        _shuffle(bins, rng)  # type: ignore[arg-type]
        allowed.append(bins)
    where = [-1] * n
    members: list[list[int]] = [[] for _ in range(k)]

    def augment(i: int, seen: list[bool]) -> bool:
        for b in allowed[i]:
            if seen[b]:
                continue
            seen[b] = True
            if len(members[b]) < sizes[b]:
                members[b].append(i)
                where[i] = b
                return True
            for j in list(members[b]):
                if augment(j, seen):
                    members[b].remove(j)
                    members[b].append(i)
                    where[i] = b
                    return True
        return False

    for i in range(n):
        if not augment(i, [False] * k):
            raise InconsistentView(
                "no deal of the unseen cards fits the hand sizes and the suits shown void"
            )
    return where
