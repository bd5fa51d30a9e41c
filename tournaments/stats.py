"""Confidence intervals with the standard library only (no scipy).

``wilson`` is the Wilson score interval of a binomial proportion (also
used for a mean of values in [0, 1], whose variance is at most that of a
win/loss with the same mean: the interval is then conservative, never
outside [0, 1] and never of zero width);
``mean_ci`` the Student-t interval of a mean, with the t quantile computed
from the regularized incomplete beta function (Numerical Recipes' continued
fraction, Lentz's method) and inverted by bisection.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True, slots=True)
class Interval:
    """An estimate with a confidence interval; ``lo``/``hi`` are ``None`` when
    the sample is too small to give one."""

    value: float | None
    lo: float | None
    hi: float | None

    def to_json(self) -> dict[str, float | None]:
        return {"value": _round(self.value), "lo": _round(self.lo), "hi": _round(self.hi)}


def _round(x: float | None) -> float | None:
    # Rounded so that standings files do not depend on the last bit of a sum.
    return None if x is None else round(x, 9)


def wilson(successes: float, n: int, z: float = Z95) -> Interval:
    """Wilson score interval for ``successes`` out of ``n`` trials."""
    if n <= 0:
        return Interval(None, None, None)
    p = min(1.0, max(0.0, successes / n))  # a sum of fractions can land an ulp outside
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # Clamped: at k = 0 or k = n rounding would otherwise leave the bound a hair off p.
    return Interval(p, min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


def mean_ci(values: Sequence[float], level: float = 0.95) -> Interval:
    """Mean with its Student-t confidence interval.

    None for fewer than 2 values, and none when every value is the same: the
    sample then shows no spread to measure, and an interval of zero width
    would claim a certainty it does not have (the figures print ``v [–]``)."""
    n = len(values)
    if n == 0:
        return Interval(None, None, None)
    if min(values) == max(values):  # one value, or all the same
        return Interval(values[0], None, None)
    mean = math.fsum(values) / n
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    if var <= 0.0:  # a spread below what a float can square
        return Interval(mean, None, None)
    half = t_quantile(0.5 + level / 2, n - 1) * math.sqrt(var / n)
    return Interval(mean, mean - half, mean + half)


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom.

    Remembered: the standings ask for the same few (level, df) pairs for every entrant and
    pairing, after every game, and each answer costs a bisection of ~45 continued-fraction
    evaluations (a thousand simulated standings spent 77 % of their time here)."""
    if not 0.0 < p < 1.0 or df < 1:
        raise ValueError("need 0 < p < 1 and df >= 1")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2


def t_cdf(t: float, df: int) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(ln_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(ln_front) * _betacf(b, a, 1.0 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h
