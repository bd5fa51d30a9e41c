"""Referee: run card and board game bots, enforce the rules, record every game."""

__version__ = "0.1.0"
