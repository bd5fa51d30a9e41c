"""How figures are written for people: one formatter for the terminal tables,
the live lines and report.html (``standings.json`` / ``.csv`` keep plain
numbers and ``null``).

* no figure at all: ``–``;
* infinity: ``+∞`` and ``-∞`` (the same hyphen-minus as every negative
  figure beside it), never ``inf`` or an en dash;
* a value with its 95 % interval: ``v [lo, hi]``; a value whose interval
  cannot be computed (one unit, or every unit gave the same figure, so there
  is no spread to measure): ``v [–]``;
* a share: percentages, with as many decimals as it takes for an interval
  that has width to print with width (``100.0% [99.6%, 100.0%]``, not
  ``100% [100%, 100%]``);
* LOS: ``57.5%``, and ``>99.9%`` / ``<0.1%`` rather than a rounded
  certainty;
* Elo: ``+35 ±20`` (half the interval, fastchess's ±) when both ends are
  finite; ``+35 ≥-20`` / ``-35 ≤+20`` when one end is unbounded; ``+∞ ≥+250``
  for a pairing won in every unit (no finite estimate, a finite lower
  bound); ``+35 ±∞`` when nothing bounds it (a single unit); ``+∞`` alone for
  a single unit won outright.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

NONE = "–"
PLUS_INF = "+∞"
MINUS_INF = "-∞"
NO_INTERVAL = f"[{NONE}]"
FEW_MARK = "(!)"


def number(x: float | None, spec: str = "+.1f") -> str:
    """``x`` formatted with ``spec``; ``–`` for none, ``±∞`` for an infinite value."""
    if x is None:
        return NONE
    if math.isinf(x):
        return PLUS_INF if x > 0 else MINUS_INF
    return format(x, spec)


def interval(iv: Mapping[str, float | None], spec: str = "+.1f") -> str:
    """``v [lo, hi]``; ``v [–]`` without an interval; ``–`` without a value."""
    if iv["value"] is None:
        return NONE
    value = number(iv["value"], spec)
    if iv["lo"] is None or iv["hi"] is None:
        return f"{value} {NO_INTERVAL}"
    return f"{value} [{number(iv['lo'], spec)}, {number(iv['hi'], spec)}]"


def share(iv: Mapping[str, float | None]) -> str:
    """A share in [0, 1] as percentages with its interval, with enough decimals to show its width."""
    value, lo, hi = iv["value"], iv["lo"], iv["hi"]
    if value is None:
        return NONE
    if lo is None or hi is None:
        return f"{value:.0%} {NO_INTERVAL}"
    for digits in range(4):
        spec = f".{digits}%"
        if format(lo, spec) != format(hi, spec) or hi == lo:
            break
    return f"{value:{spec}} [{lo:{spec}}, {hi:{spec}}]"


def elo_value(e: Mapping[str, Any]) -> str:
    """The Elo estimate: ``+35``, ``+∞`` / ``-∞`` at a score of 1 / 0, ``–`` without units."""
    if not e["units"] or e["score"] is None:
        return NONE
    if e["elo"] is None:
        return PLUS_INF if e["score"] >= 1 else MINUS_INF
    return "+0" if abs(e["elo"]) < 0.5 else f"{e['elo']:+.0f}"


def elo_text(e: Mapping[str, Any], *, warn: bool = True) -> str:
    """The Elo estimate and its 95 % interval in short (see the module text); ``(!)`` under 30 units."""
    value = elo_value(e)
    if value == NONE:
        return NONE
    lo, hi = (e["lo"], e["hi"]) if e["bounded"] else (None, None)
    if lo is not None and hi is not None:
        text = f"{value} ±{(hi - lo) / 2:.0f}"
    elif lo is not None:
        text = f"{value} ≥{lo:+.0f}"
    elif hi is not None:
        text = f"{value} ≤{hi:+.0f}"
    else:
        text = value if e["elo"] is None else f"{value} ±∞"
    return text + (f" {FEW_MARK}" if warn and e["few_units"] else "")


def elo_interval_text(e: Mapping[str, Any]) -> str:
    """``[lo, hi]`` with ``-∞`` / ``+∞`` for an unbounded end; ``–`` without units."""
    if not e["units"]:
        return NONE
    lo, hi = (e["lo"], e["hi"]) if e["bounded"] else (None, None)
    return f"[{MINUS_INF if lo is None else f'{lo:+.0f}'}, {PLUS_INF if hi is None else f'{hi:+.0f}'}]"


def sprt_progress(sprt: Mapping[str, Any]) -> str:
    """How far an SPRT got: the one wording of the text and the chart (the LLR is over complete units)."""
    return f"after {sprt['units']} units ({sprt['games']} games played)"


def percent(x: float | None, spec: str = ".1%") -> str:
    return NONE if x is None else format(x, spec)


def los_text(e: Mapping[str, Any]) -> str:
    """The likelihood of superiority; never a rounded 100.0 % or 0.0 %, which would claim certainty."""
    los = e["los"]
    if los is not None and los >= 0.9995:
        return ">99.9%"
    if los is not None and los <= 0.0005:
        return "<0.1%"
    return percent(los)


# -- lines of text the terminal and the page share --------------------------------------


def sandbox_notes(sandbox: dict[str, Any] | None) -> list[str]:
    """Warnings for standings whose games did not all run isolated (docs/security.md)."""
    if not sandbox:
        return []
    notes = []
    off = sandbox.get("games", {}).get("off", 0)
    if off:
        notes.append(f"WARNING: {off} game{'s' if off != 1 else ''} ran with bots NOT sandboxed")
    if sandbox.get("network"):
        notes.append(f"WARNING: network allowed for {', '.join(sandbox['network'])}")
    return notes


def distribution_text(p: dict[str, Any]) -> str:
    """The pentanomial as LL-LD-DD/WL-WD-WW (Schmier: A's unit scores 0 … 6 as counts)."""
    if p.get("pentanomial") is not None:
        return "-".join(str(c) for c in p["pentanomial"])
    return " ".join(f"{k}:{v}" for k, v in p["distribution"].items() if v) or "–"


def sprt_lines(sprt: dict[str, Any]) -> list[str]:
    return [
        f"SPRT {sprt['a']} vs {sprt['b']}: H0 elo {sprt['elo0']:g}, H1 elo {sprt['elo1']:g} (normalised), "
        f"alpha {sprt['alpha']:g}, beta {sprt['beta']:g}",
        f"LLR {sprt['llr']:+.2f} in [{sprt['lower']:.2f}, {sprt['upper']:.2f}] {sprt_progress(sprt)}: "
        f"{sprt['verdict']}",
    ]
