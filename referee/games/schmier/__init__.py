"""Schmier (RULES.md §2): 6 seats, 3 teams, bid / trump / discard / play."""

from .rules import SPEC, SchmierSpec, SchmierState

__all__ = ["SPEC", "SchmierSpec", "SchmierState"]
