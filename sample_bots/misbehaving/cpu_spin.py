#!/usr/bin/env python3
"""Plays legally, then spins the CPU on a decision forever (for the CPU-time cap)."""
from _base import play, say


def misbehave(request, hello):
    say(f"spinning on request {request['id']}")
    n = 0
    while True:
        n += 1


play(misbehave)
