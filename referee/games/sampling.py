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
2. Otherwise *construction plus mixing*: a consistent deal is built by
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
    cards = list(pool)
    bounds = []
    start = 0
    for n in sizes:
        bounds.append((start, start + n))
        start += n
    checked = [(b, lo, hi, refused[b]) for b, (lo, hi) in enumerate(bounds) if refused[b] and hi > lo]
    if not checked:
        rng.shuffle(cards)
        return [cards[lo:hi] for lo, hi in bounds]
    for _ in range(tries):
        rng.shuffle(cards)
        for _b, lo, hi, ref in checked:
            if not ref.isdisjoint(cards[lo:hi]):
                break
        else:
            return [cards[lo:hi] for lo, hi in bounds]
    return _construct_and_mix(cards, sizes, refused, rng, mix)


def _construct_and_mix(
    cards: list[str],
    sizes: Sequence[int],
    refused: Sequence[Set[str]],
    rng: random.Random,
    mix: int,
) -> list[list[str]]:
    k = len(sizes)
    rng.shuffle(cards)
    n = len(cards)
    # allowed[i]: the bins card i may go to, in a random order.
    allowed: list[list[int]] = []
    for c in cards:
        bins = [b for b in range(k) if sizes[b] and c not in refused[b]]
        if not bins:
            raise InconsistentView(f"the unseen card {c} fits in no hand or pile")
        rng.shuffle(bins)
        allowed.append(bins)
    where = [-1] * n
    members: list[list[int]] = [[] for _ in range(k)]

    def augment(i: int, seen: list[bool]) -> bool:
        # Iterative would be faster; depth is bounded by the number of bins.
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
    # Mix: swap two cards of different bins when each may go to the other's bin.
    for _ in range(mix * n):
        i = rng.randrange(n)
        j = rng.randrange(n)
        bi, bj = where[i], where[j]
        if bi != bj and cards[i] not in refused[bj] and cards[j] not in refused[bi]:
            where[i], where[j] = bj, bi
    out: list[list[str]] = [[] for _ in range(k)]
    for i, b in enumerate(where):
        out[b].append(cards[i])
    for b in range(k):
        rng.shuffle(out[b])
    return out
