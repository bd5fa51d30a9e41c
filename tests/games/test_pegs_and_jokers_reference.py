"""Pegs and Jokers: the fast move generator against a slow, literal reference.

The reference below reads RULES.md §3 step by step on position texts: it walks
every forward move hole by hole (branching into home at the in-spot), applies
hits with PJ-7 on a copied board, enumerates every 7 split in both orders and
groups sequences by the board they leave (PJ-5.4).  For random positions (and
positions from random playouts) the engine must list exactly one text per
(card, resulting board), each text must be a legal sequence in the reference,
and applying it must leave the board the reference computed.
"""

from __future__ import annotations

import random

import pytest

from referee.games.pegs_and_jokers import SPEC, PegsAndJokersState
from referee.games.pegs_and_jokers.rules import deck_for

Board = tuple[tuple[str, ...], ...]


def in_spot(c: int) -> str:
    return f"T{18 * c + 3}"


def come_out(c: int) -> str:
    return f"T{18 * c + 8}"


def walk(pegs, c: int, src: str, n: int, holes: int, back: bool = False) -> list[str]:
    """Every hole a peg of colour c at src reaches in exactly n single steps."""
    own = set(pegs[c])
    ends: list[str] = []

    def step(cur: str, left: int) -> None:
        if left == 0:
            ends.append(cur)
            return
        if cur[0] == "H":
            nexts = [f"H{int(cur[1:]) + 1}"] if int(cur[1:]) < 5 else []
        elif back:
            nexts = [f"T{(int(cur[1:]) - 1) % holes}"]
        else:
            nexts = [f"T{(int(cur[1:]) + 1) % holes}"]
            if cur == in_spot(c):
                nexts.append("H1")
        for nxt in nexts:
            if nxt not in own:  # PJ-6.1: never pass or land on an own peg
                step(nxt, left - 1)

    step(src, n)
    return ends


def land(pegs, c: int, src: str, dst: str):
    """The board after colour c's peg moves src -> dst with PJ-7, or None if illegal."""
    if dst in pegs[c]:
        return None
    new = [list(p) for p in pegs]
    new[c][new[c].index(src)] = dst
    if dst[0] == "H":
        return new
    victims = [o for o in range(len(pegs)) if o != c and dst in pegs[o]]
    if not victims:
        return new
    (o,) = victims
    if o % 2 != c % 2:  # PJ-7.1
        new[o][new[o].index(dst)] = "S"
        return new
    spot = in_spot(o)  # PJ-7.2 and its ruling
    if spot == dst:
        return None
    holders = [q for q in range(len(pegs)) if spot in new[q]]
    if holders:
        (q,) = holders
        if q % 2 == c % 2:
            return None
        new[q][new[q].index(spot)] = "S"
    new[o][new[o].index(dst)] = spot
    return new


def key(pegs) -> Board:
    return tuple(tuple(sorted(p)) for p in pegs)


def single_moves(pegs, c: int, card: str, holes: int) -> dict[str, list]:
    """Text suffix -> board after, for every one-part move of the card (not the 7 split)."""
    out: dict[str, list] = {}
    rank = card if card == "JK" else card[0]
    srcs = sorted(set(p for p in pegs[c] if p != "S"))

    def add(src, dst, new):
        if new is not None:
            out[f"{c}:{src}-{dst}"] = new

    if rank == "JK":
        targets = [p for o in range(len(pegs)) if o != c for p in pegs[o] if p[0] == "T"]
        for src in (["S"] if "S" in pegs[c] else []) + [s for s in srcs if s[0] == "T"]:
            for dst in targets:
                add(src, dst, land(pegs, c, src, dst))
        return out
    if rank in "AKQJ" and "S" in pegs[c]:
        add("S", come_out(c), land(pegs, c, "S", come_out(c)))
    if rank == "8":
        for src in srcs:
            if src[0] == "T":
                for dst in walk(pegs, c, src, 8, holes, back=True):
                    add(src, dst, land(pegs, c, src, dst))
        return out
    n = {"A": 1, "K": 10, "Q": 10, "J": 10, "T": 10}.get(rank) or int(rank)
    for src in srcs:
        for dst in walk(pegs, c, src, n, holes):
            add(src, dst, land(pegs, c, src, dst))
    return out


def seven_moves(pegs, c: int, holes: int) -> dict[str, Board]:
    """Text suffix -> board after, for every 7 (one peg or a split in sequence)."""
    out = {s: key(b) for s, b in single_moves(pegs, c, "7C", holes).items()}
    for a in sorted(set(p for p in pegs[c] if p != "S")):
        for x in range(1, 7):
            for a1 in walk(pegs, c, a, x, holes):
                mid = land(pegs, c, a, a1)
                if mid is None:
                    continue
                for b in sorted(set(p for p in mid[c] if p not in ("S", a1))):
                    for b1 in walk(mid, c, b, 7 - x, holes):
                        end = land(mid, c, b, b1)
                        if end is not None:
                            out[f"{c}:{a}-{a1},{c}:{b}-{b1}"] = key(end)
    return out


def reference(state: PegsAndJokersState) -> tuple[dict[str, Board], bool]:
    """All legal texts (every order of a 7) -> board after; and whether discards are allowed."""
    pegs = state.peg_texts()
    c = state.colour
    holes = state.board.holes
    texts: dict[str, Board] = {}
    non_joker = False
    for card in sorted(set(state.hands[state.seat])):
        if card[0] == "7":
            moves = seven_moves(pegs, c, holes)
        else:
            moves = {s: key(b) for s, b in single_moves(pegs, c, card, holes).items()}
        if moves and card != "JK":
            non_joker = True
        for suffix, board in moves.items():
            texts[f"{card} {suffix}"] = board
    return texts, not non_joker


def check(state: PegsAndJokersState) -> None:
    texts, discards = reference(state)
    legal = state.legal_actions()
    moves = [a for a in legal if not a.startswith("discard ")]
    assert len(set(legal)) == len(legal)
    # every listed move is a legal sequence and leaves the board the reference says
    for a in moves:
        assert a in texts, f"engine lists {a!r}, not legal by the reference"
        probe = state.clone()
        probe.apply(a)
        assert key(probe.peg_texts()) == texts[a], a
    # one text per distinct (card, board): PJ-5.4
    want = {(t[:2], b) for t, b in texts.items()}
    got = [(a[:2], texts[a]) for a in moves]
    assert len(set(got)) == len(got), "two listed moves leave the same board"
    assert set(got) == want
    # PJ-4.3
    cards = sorted(set(state.hands[state.seat]))
    listed_discards = [a for a in legal if a.startswith("discard ")]
    assert listed_discards == ([f"discard {c}" for c in cards] if discards else [])


def random_position(rng: random.Random, players: int) -> PegsAndJokersState:
    holes = 18 * players
    free = list(range(holes))
    rng.shuffle(free)
    pegs = {}
    to_act = rng.randrange(players)
    # bias the track towards one side so that pegs meet (hits, blocks, 7 splits)
    crowd = rng.randrange(players)
    near = [h for h in range(18 * crowd - 12, 18 * crowd + 24)]
    for seat in range(players):
        texts = []
        finished = seat == to_act and rng.random() < 0.15
        homes = [1, 2, 3, 4, 5] if finished else rng.sample(range(1, 6), rng.choice([0, 0, 1, 2, 3]))
        texts += [f"H{k}" for k in homes]
        for _ in range(5 - len(texts)):
            r = rng.random()
            if r < 0.25:
                texts.append("S")
            else:
                pick = [h % holes for h in near if h % holes in free] if r < 0.7 else free
                if not pick:
                    pick = free
                h = rng.choice(pick)
                free.remove(h)
                texts.append(f"T{h}")
        pegs[seat] = texts
    if all(p == [f"H{k}" for k in [1, 2, 3, 4, 5]] for s, p in pegs.items() if s % 2 == to_act % 2):
        pegs[(to_act + 2) % players] = ["S"] * 5
    deck = deck_for(players)
    weighted = ["7C", "7D", "JK", "8S", "AH", "KD"] * 3 + sorted(set(deck))
    hand = [rng.choice(weighted) for _ in range(6)]
    return PegsAndJokersState.from_position(
        players, pegs=pegs, hands={to_act: hand}, to_act=to_act, seed=rng.randrange(10**6)
    )


@pytest.mark.parametrize("players", [4, 6, 8])
def test_engine_matches_the_reference_on_random_positions(players):
    rng = random.Random(players)
    for _ in range(120):
        check(random_position(rng, players))


@pytest.mark.parametrize("players", [4, 8])
def test_engine_matches_the_reference_along_random_playouts(players):
    state, _ = SPEC.new_game(players, {"players": players})
    rng = random.Random(17)
    n = 0
    while state.to_act() is not None and n < 1500:
        if n % 6 == 0:
            check(state)
        state.apply(rng.choice(state.legal_actions()))
        n += 1
