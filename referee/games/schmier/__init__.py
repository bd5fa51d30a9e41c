"""Schmier (RULES.md §2): 6 seats, 3 teams, bid / trump / discard / play."""

from .render import RENDERER, SchmierRenderer
from .rules import SPEC, SchmierSpec, SchmierState

__all__ = ["RENDERER", "SPEC", "SchmierRenderer", "SchmierSpec", "SchmierState"]
