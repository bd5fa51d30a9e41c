"""Elo, its 95 % interval and LOS from duplicate units: pure, stdlib only.

A **duplicate unit** is one deal seed played in every seating of a pairing,
so the luck of the cards cancels inside it.  For two entrants A and B a unit
gives A a **unit score**: A's points over the unit's ``games`` comparisons
(1 per comparison won, ½ tied, 0 lost).

* Two-team games (Back Alley, Pegs and Jokers): a unit is the deal in both
  seatings, ``games = 2``, and A's unit score is in {0, ½, 1, 1½, 2}: the
  pentanomial of fastchess and fishtest (LL, LD, DD+WL, WD, WW).
* Schmier (three teams): a unit is the deal in all six seatings of the
  triple A, B, C; in each game A is compared with B by placing (ahead 1,
  level ½, behind 0), so ``games = 6`` and A's unit score is in
  {0, ½, …, 6}.  The third entrant is part of the deal, not of the score.

From ``n`` unit scores ``x`` (as fractions ``x / games``), the mean score per
game ``s``, its standard error ``se = sd(x / games) / sqrt(n)`` (the spread
of whole units, so the correlation inside a unit is accounted for) and:

* Elo ``= -400 log10(1/s - 1)`` (logistic Elo, as fastchess and fishtest);
* the 95 % interval: the Student-t interval of ``s`` with ``n - 1`` degrees
  of freedom, mapped through the same function (a bound past 0 or 1 is
  unbounded, ``None``).  No interval below 2 units; when every unit scored
  the same, the spread is that of the units with one moved half a point
  (``_variance_floor``), not zero;
* LOS, the likelihood of superiority: ``P(T_{n-1} < (s - ½) / se)``;
* normalised Elo ``= (s - ½) / sigma_game * 800 / ln 10``, with
  ``sigma_game = sd(x / games) * sqrt(games)`` the per-game deviation
  (fishtest's ``nelo``; for a pentanomial ``sqrt(2 var)``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .stats import t_cdf, t_quantile

NELO_PER_T = 800 / math.log(10)  # normalised Elo per unit of t-value (fishtest's nelo_divided_by_nt)
FEW_UNITS = 30  # below this many duplicate units, a figure is printed with a warning


def elo_of_score(score: float) -> float | None:
    """Logistic Elo difference of a mean score per game in [0, 1]; ``None`` at 0 or 1 (infinite)."""
    if not 0.0 < score < 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_of_elo(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def unit_distribution(scores: Sequence[float], games: int) -> dict[float, int]:
    """Count of each possible unit score 0, ½, …, ``games`` (the pentanomial for ``games = 2``)."""
    counts = Counter(scores)
    return {k / 2: counts.get(k / 2, 0) for k in range(2 * games + 1)}


@dataclass(frozen=True, slots=True)
class EloEstimate:
    units: int
    games: int  # comparisons per unit
    score: float | None  # mean points per comparison
    elo: float | None
    lo: float | None  # None: unbounded below (or no interval, see ``bounded``)
    hi: float | None
    bounded: bool  # an interval was computed (n >= 2)
    los: float | None
    nelo: float | None

    @property
    def few(self) -> bool:
        return self.units < FEW_UNITS

    def contains(self, elo: float) -> bool:
        """Is ``elo`` inside the interval?  With no interval, every value is."""
        return (self.lo is None or self.lo <= elo) and (self.hi is None or elo <= self.hi)

    def to_json(self) -> dict[str, Any]:
        def r(x: float | None, digits: int = 6) -> float | None:
            return None if x is None else round(x, digits)

        return {"units": self.units, "games_per_unit": self.games, "score": r(self.score, 9),
                "elo": r(self.elo), "lo": r(self.lo), "hi": r(self.hi), "bounded": self.bounded,
                "los": r(self.los, 9), "nelo": r(self.nelo), "few_units": self.few}


def estimate(scores: Sequence[float], games: int, level: float = 0.95) -> EloEstimate:
    """Elo, interval, LOS and normalised Elo of A from its unit scores (see the module text)."""
    n = len(scores)
    if n == 0:
        return EloEstimate(0, games, None, None, None, None, False, None, None)
    fractions = [x / games for x in scores]
    s = math.fsum(fractions) / n
    elo = elo_of_score(s)
    if n < 2:
        return EloEstimate(n, games, s, elo, None, None, False, None, None)
    var = math.fsum((f - s) ** 2 for f in fractions) / (n - 1)
    if var <= 0.0:
        var = _variance_floor(fractions, games)
    se = math.sqrt(var / n)
    half = t_quantile(0.5 + level / 2, n - 1) * se
    lo = elo_of_score(s - half) if s - half > 0.0 else None
    hi = elo_of_score(s + half) if s + half < 1.0 else None
    los = t_cdf((s - 0.5) / se, n - 1)
    nelo = (s - 0.5) / math.sqrt(var * games) * NELO_PER_T
    return EloEstimate(n, games, s, elo, lo, hi, True, los, nelo)


def _variance_floor(fractions: Sequence[float], games: int) -> float:
    """The spread to use when every unit scored the same: that of the same units with
    one moved by the smallest step (half a point) toward an even score, or away from
    it when they are all even.  Zero spread would claim certainty (30 lost units
    would never tell a crashing bot from a good one); this is the least doubt the
    data cannot rule out."""
    n = len(fractions)
    v = fractions[0]
    step = 0.5 / games
    moved = v + step if v < 0.5 else v - step if v > 0.5 else v + step
    mean = (v * (n - 1) + moved) / n
    return ((n - 1) * (v - mean) ** 2 + (moved - mean) ** 2) / (n - 1)
