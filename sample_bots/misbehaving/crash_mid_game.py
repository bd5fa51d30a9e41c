#!/usr/bin/env python3
"""(3) Plays legally, then crashes with an uncaught exception (traceback on stderr, exit code 1)."""
from _base import play, say


def misbehave(request, hello):
    say(f"crashing on request {request['id']}")
    raise RuntimeError("crashed on purpose mid-game")


play(misbehave)
