"""A small learned Back Alley policy: a table of bids learned from deal scores.

The policy reads only what ``referee.env`` gives an agent (the observation
vector and the action mask of ``protocol.encoding``), so the same object is
trained in-process (``train.py``) and plays as a subprocess bot
(``policy_bot.py``, through ``protocol.bot.run_policy``).

* **Bidding** (learned): the hand is summed up in a few coarse features —
  cards per player ``h`` (in 6 bands), trumps held (0 … 4+), high cards
  (0 … 3+), the partner's bid so far —
  and a table keeps, per features and bid, the mean deal score the team got
  after that bid.  The policy bids the best mean among the legal bids with
  at least ``MIN_SAMPLES`` scores; without one it falls back to a rough
  estimate of the tricks the hand takes (all an untrained table does).
* **Play** (fixed, not learned): while the team still needs tricks for its
  contract, play the strongest legal card; once it is made, the weakest.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from protocol.encoding import encoding_for

ENC = encoding_for("back-alley")
F = ENC.fields
BID_IDS = range(14)  # 0 pass, 1 … 12, 13 board (protocol.encoding's Back Alley ids)
CARD0 = 14  # id of the first card; card i of DECK is id 14 + i
DECK = ENC.DECK
RANKS = "23456789TJQKA"
#: A table cell is trusted once it holds this many deal scores.
MIN_SAMPLES = 8


def field(obs: np.ndarray, name: str) -> np.ndarray:
    offset, size = F[name]
    return obs[offset:offset + size]


def trump_of(obs: np.ndarray) -> str | None:
    i = int(np.argmax(field(obs, "trump")))
    return None if i == 4 else "CDHS"[i]


def strength(card: str, trump: str | None) -> int:
    """Higher wins more often: jokers, then trumps by rank, then other cards by rank."""
    if card in ("BJ", "LJ"):
        return 200 if card == "BJ" else 199
    rank = RANKS.index(card[0])
    return rank + (100 if card[1] == trump else 0)


def features(obs: np.ndarray) -> str:
    """The table key of a bidding observation."""
    h = int(np.argmax(field(obs, "h"))) + 1
    trump = trump_of(obs)
    hand = [DECK[i] for i in np.flatnonzero(field(obs, "hand"))]
    trumps = sum(1 for c in hand if c in ("BJ", "LJ") or c[1] == trump)
    high = sum(1 for c in hand if c[0] in "AK" or c in ("BJ", "LJ") or (c[1] == trump and c[0] == "Q"))
    partner = field(obs, "bids")[2 * 14:3 * 14]  # relative seat 2: the partner
    if not partner.any():
        p = "none"
    else:
        b = int(np.argmax(partner))
        p = "pass" if b == 0 else "board" if b == 13 else "low" if b <= 2 else "high"
    size = next(band for top, band in ((1, "1"), (2, "2"), (4, "3-4"), (7, "5-7"), (10, "8-10"), (13, "11-13"))
                if h <= top)
    return f"h{size}:t{min(trumps, 4)}:k{min(high, 3)}:p{p}"


def estimate(obs: np.ndarray) -> int:
    """A rough trick count, or 13 (board) for a hand of one or two top trumps: the
    fallback bid where the table knows no better."""
    h = int(np.argmax(field(obs, "h"))) + 1
    trump = trump_of(obs)
    hand = [DECK[i] for i in np.flatnonzero(field(obs, "hand"))]
    tricks = 0.0
    for c in hand:
        if c in ("BJ", "LJ") or (c[1] == trump and c[0] in "AK"):
            tricks += 0.95
        elif c[1] == trump:
            tricks += 0.6 if c[0] == "Q" else 0.35
        elif c[0] == "A":
            tricks += 0.75
        elif c[0] == "K" and h >= 5:
            tricks += 0.3
    if h <= 2 and tricks >= 0.9 * h:
        return 13  # board: every trick with a tiny hand of top trumps
    return max(0, min(h - 1, round(tricks)))


class BiddingPolicy:
    """``policy(obs, mask) -> action id``; ``table[key][bid] = [sum of deal scores, count]``."""

    def __init__(self, table: dict[str, dict[str, list[float]]] | None = None, epsilon: float = 0.0,
                 seed: int | None = None) -> None:
        self.table = table if table is not None else {}
        self.epsilon = epsilon
        self.rng = random.Random(seed)

    @classmethod
    def load(cls, path: Path) -> BiddingPolicy:
        return cls(json.loads(Path(path).read_text(encoding="utf-8"))["table"])

    def save(self, path: Path, **about: object) -> None:
        Path(path).write_text(json.dumps({"about": about, "table": self.table}, sort_keys=True), encoding="utf-8")

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        if legal[0] < CARD0:
            return self.bid(obs, [int(b) for b in legal])
        return self.play(obs, [int(a) for a in legal])

    def bid(self, obs: np.ndarray, legal: list[int]) -> int:
        guess = estimate(obs)
        if self.epsilon and self.rng.random() < self.epsilon:
            # Explore near the estimate (a far bid mostly teaches how bad it is), pass and board.
            near = [b for b in legal if b in (0, 13) or abs(b - guess) <= 2]
            return self.rng.choice(near or legal)
        row = self.table.get(features(obs))
        if row:
            known = [(s / n, b) for b, (s, n) in ((int(k), v) for k, v in row.items())
                     if b in legal and n >= MIN_SAMPLES]
            if known:
                return max(known)[1]
        return guess if guess in legal else legal[0]

    def learn(self, key: str, bid: int, reward: float) -> None:
        cell = self.table.setdefault(key, {}).setdefault(str(bid), [0.0, 0])
        cell[0] += reward
        cell[1] += 1

    def play(self, obs: np.ndarray, legal: list[int]) -> int:
        trump = trump_of(obs)
        own_target, own_board = field(obs, "contracts")[:2]
        won = field(obs, "tricks_won")[0]
        h = int(np.argmax(field(obs, "h"))) + 1
        need = h if own_board else own_target
        by_strength = sorted(legal, key=lambda a: strength(DECK[a - CARD0], trump))
        return by_strength[-1] if won < need else by_strength[0]
