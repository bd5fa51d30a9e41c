#!/usr/bin/env python3
"""(4) Plays legally, then hangs on a decision forever (never answers)."""
import time

from _base import play, say


def misbehave(request, hello):
    say(f"hanging on request {request['id']}")
    time.sleep(3600)


play(misbehave)
