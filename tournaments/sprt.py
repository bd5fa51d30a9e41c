"""The sequential probability ratio test of fishtest and fastchess, on duplicate units.

``elo0`` and ``elo1`` are **normalised** Elo (fishtest's and fastchess's
default model): H0 says the first entrant is ``elo0`` better than the
second, H1 that it is ``elo1`` better.  Units are played until the
log-likelihood ratio leaves ``(lower, upper) = (ln(beta / (1 - alpha)),
ln((1 - beta) / alpha))``: at ``upper`` H1 is accepted, at ``lower`` H0.

The LLR is fishtest's generalised LLR for the t-value statistic
(``LLRcalc.LLR_normalized``; M. Van den Bergh, "Comments on normalized
Elo", section 4.1): the unit scores as fractions ``a_i = k / (2 games)``
with empirical frequencies ``phat_i`` (a zero count counts as 0.001, as
fishtest regularises), the maximum-likelihood distributions ``p0``, ``p1``
whose t-value ``(mu - 1/2) / sigma`` is ``t0``, ``t1``, and
``LLR = N * sum_i phat_i (ln p1_i - ln p0_i)``.  A unit of ``games``
comparisons has ``t = nelo / (800 / ln 10) * sqrt(games)``: ``sqrt(2)``
for the pentanomial, as fishtest; ``games = 1`` with draws is fishtest's
trinomial.  See ``tournaments.elo`` for what a unit is in each game.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .elo import NELO_PER_T, unit_distribution
from .results import GameResult
from .standings import complete_units

REGULARIZE = 1e-3  # fishtest's stand-in for a zero count
DEFAULT_MAX_GAMES = 20_000  # the cap of an SPRT run without --max-games / sprt.max_games


class SprtError(ValueError):
    """A bad ``--sprt`` / ``[sprt]`` setting (one line, for the user)."""


@dataclass(frozen=True, slots=True)
class SprtSpec:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise SprtError(f"sprt: {name} must be a finite number, got {value!r}")
        if not self.elo0 < self.elo1:
            raise SprtError(f"sprt: elo0 must be less than elo1 (got {self.elo0:g} and {self.elo1:g})")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise SprtError("sprt: alpha and beta must be between 0 and 1, with alpha + beta < 1")

    @classmethod
    def parse(cls, text: str) -> SprtSpec:
        """From ``elo0=0,elo1=5[,alpha=0.05,beta=0.05]``."""
        values: dict[str, float] = {}
        for part in text.split(","):
            key, sep, value = part.partition("=")
            key = key.strip()
            if not sep or key not in ("elo0", "elo1", "alpha", "beta"):
                raise SprtError(f"--sprt {text!r}: expected elo0=X,elo1=Y[,alpha=A,beta=B]")
            if key in values:
                raise SprtError(f"--sprt {text!r}: {key} given twice")
            try:
                values[key] = float(value)
            except ValueError:
                raise SprtError(f"--sprt {text!r}: {key} is not a number") from None
        if "elo0" not in values or "elo1" not in values:
            raise SprtError(f"--sprt {text!r}: both elo0 and elo1 are needed")
        return cls(**values)

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def decision(self, llr: float) -> str | None:
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None

    def to_json(self) -> dict[str, float]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}


def llr(spec: SprtSpec, distribution: Mapping[float, int], games: int) -> float:
    """The LLR of H1 against H0 for a table of unit scores (``elo.unit_distribution``)."""
    counts = [float(distribution.get(k / 2, 0)) for k in range(2 * games + 1)]
    if not any(counts):
        return 0.0
    regular = [c if c > 0 else REGULARIZE for c in counts]
    total = math.fsum(regular)
    phat = [c / total for c in regular]
    values = [k / (2 * games) for k in range(2 * games + 1)]
    scale = math.sqrt(games) / NELO_PER_T
    p0 = mle_t_value(values, phat, 0.5, spec.elo0 * scale)
    p1 = mle_t_value(values, phat, 0.5, spec.elo1 * scale)
    return total * math.fsum(ph * (math.log(b) - math.log(a)) for ph, a, b in zip(phat, p0, p1, strict=True))


def mle_t_value(values: Sequence[float], phat: Sequence[float], ref: float, t: float) -> list[float]:
    """The distribution on ``values`` nearest ``phat`` (maximum likelihood) whose
    ``(mean - ref) / sd`` is ``t``: the fixed point of Van den Bergh's section 4.1."""
    n = len(values)
    p = [1.0 / n] * n  # fishtest's start: the uniform distribution
    for _ in range(1000):
        mu = sum(pi * a for pi, a in zip(p, values, strict=True))
        sigma = math.sqrt(sum(pi * (a - mu) ** 2 for pi, a in zip(p, values, strict=True)))
        phi = [a - ref - t * sigma * (1 + ((mu - a) / sigma) ** 2) / 2 for a in values]
        x = _secular_root(phi, phat)
        new = [ph / (1 + x * f) for ph, f in zip(phat, phi, strict=True)]
        change = max(abs(a - b) for a, b in zip(new, p, strict=True))
        p = new
        if change < 1e-13:
            break
    return p


def _secular_root(phi: Sequence[float], weights: Sequence[float]) -> float:
    """The root of ``f(x) = sum w_i phi_i / (1 + x phi_i)``, which decreases from
    +inf to -inf on ``(-1/max phi, -1/min phi)``: Newton steps kept inside a
    shrinking bracket (a bisection step whenever Newton would leave it)."""
    low, high = min(phi), max(phi)
    if not low < 0 < high:
        raise SprtError("sprt: elo0/elo1 too far from the observed results for the t-value model")
    a, b = -1 / high, -1 / low
    x = 0.0  # f(0) = sum w phi: a fine start, inside the bracket
    for _ in range(200):
        value = slope = 0.0
        for w, f in zip(weights, phi, strict=True):
            q = f / (1 + x * f)
            value += w * q
            slope -= w * q * q
        if value > 0:
            a = x
        else:
            b = x
        step = x - value / slope
        nxt = step if a < step < b else (a + b) / 2
        if abs(nxt - x) <= 1e-15 * max(1.0, abs(x)):
            return nxt
        x = nxt
    return x


@dataclass(frozen=True, slots=True)
class SprtStatus:
    spec: SprtSpec
    a: str  # the entrant H1 says is better
    b: str
    units: int  # complete duplicate units
    games: int  # games played in all (complete units and not)
    games_per_unit: int
    distribution: dict[float, int]
    llr: float
    max_games: int | None = None

    @property
    def decision(self) -> str | None:
        return self.spec.decision(self.llr)

    @property
    def stopped(self) -> bool:
        return self.decision is not None

    def verdict(self, finished: bool) -> str:
        """H0 / H1 accepted, running, or inconclusive (the cap was reached first)."""
        d = self.decision
        favour = f"elo {self.spec.elo1:g} favoured over {self.spec.elo0:g}"
        if d == "H1":
            return f"H1 accepted: {self.a} is better than {self.b} ({favour})"
        if d == "H0":
            return (f"H0 accepted: {self.a} is not better than {self.b} by {self.spec.elo1:g} "
                    f"(elo {self.spec.elo0:g} favoured over {self.spec.elo1:g})")
        return "inconclusive: the game cap was reached before a bound" if finished else "running"

    def to_json(self, finished: bool = False) -> dict[str, Any]:
        return {
            **self.spec.to_json(),
            "a": self.a, "b": self.b,
            "llr": round(self.llr, 6), "lower": round(self.spec.lower, 6), "upper": round(self.spec.upper, 6),
            "decision": self.decision,
            "verdict": self.verdict(finished),
            "units": self.units, "games": self.games, "games_per_unit": self.games_per_unit,
            "max_games": self.max_games,
            "distribution": {f"{k:g}": v for k, v in self.distribution.items()},
        }


def status(spec: SprtSpec, a: str, b: str, unit_scores: Sequence[float], games_per_unit: int,
           games: int, max_games: int | None = None) -> SprtStatus:
    dist = unit_distribution(unit_scores, games_per_unit)
    return SprtStatus(spec, a, b, len(unit_scores), games, games_per_unit, dist,
                      llr(spec, dist, games_per_unit), max_games)


def llr_history(spec: SprtSpec, unit_scores: Sequence[float], games_per_unit: int,
                points: int = 200) -> list[tuple[int, float]]:
    """(units, LLR) after each prefix of the units, at most ``points`` of them (for the report's chart)."""
    n = len(unit_scores)
    step = max(1, math.ceil(n / points))
    marks = sorted({*range(step, n + 1, step), n} - {0})
    return [(k, llr(spec, unit_distribution(unit_scores[:k], games_per_unit), games_per_unit)) for k in marks]


@dataclass(frozen=True, slots=True)
class SprtRun:
    """An SPRT between the entrants ``a`` and ``b`` of a tournament (Schmier: with
    ``reference`` in the third team), playing at most ``max_games`` games."""

    spec: SprtSpec
    a: str
    b: str
    num_teams: int
    max_games: int
    reference: str | None = None

    @classmethod
    def for_entrants(cls, spec: SprtSpec, names: Sequence[str], num_teams: int, *,
                     reference: str | None = None, max_games: int | None = None) -> SprtRun:
        if max_games is not None and max_games < 1:
            raise SprtError("sprt: max_games must be at least 1")
        if num_teams == 2:
            if reference is not None:
                raise SprtError("sprt: a reference entrant is only for three-team games (Schmier)")
            if len(names) != 2:
                raise SprtError(f"sprt: needs exactly two entrants, got {len(names)}")
            a, b = names
        elif num_teams == 3:
            if reference is None:
                raise SprtError("sprt: Schmier has three teams: name the entrant that fills the third "
                                "(sprt.reference = \"NAME\" or --sprt-reference NAME)")
            if len(names) != 3 or reference not in names:
                raise SprtError(f"sprt: needs exactly three entrants, the reference {reference!r} among them")
            a, b = (n for n in names if n != reference)
        else:
            raise SprtError(f"sprt: not for games of {num_teams} teams")
        return cls(spec, a, b, num_teams, max_games or DEFAULT_MAX_GAMES, reference)

    @property
    def games_per_unit(self) -> int:
        return math.factorial(self.num_teams)

    @property
    def units_cap(self) -> int:
        """Deals to schedule: enough units for ``max_games`` games."""
        return math.ceil(self.max_games / self.games_per_unit)

    def unit_scores(self, results: Iterable[GameResult]) -> list[float]:
        """A's unit scores against B, complete units only, in the order they were dealt."""
        ordered = sorted(results, key=lambda r: r.game_id)
        return [u.versus(self.a, self.b) for u in complete_units(self.num_teams, ordered)]

    def status(self, results: Iterable[GameResult]) -> SprtStatus:
        results = list(results)
        return status(self.spec, self.a, self.b, self.unit_scores(results), self.games_per_unit,
                      len(results), self.max_games)

    def history(self, results: Iterable[GameResult]) -> list[tuple[int, float]]:
        """(complete units, LLR) along the run, for the report's chart: the LLR is a function
        of the complete units, so they, not the games played, are its axis (the games of an
        unfinished unit count in ``SprtStatus.games`` and in no LLR)."""
        return llr_history(self.spec, self.unit_scores(results), self.games_per_unit)
