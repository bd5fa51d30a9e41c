#!/usr/bin/env python3
"""(13) Ignores SIGTERM (and the end of its stdin), plays legally, then hangs on a decision."""
import signal
import time

from _base import play, say

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def misbehave(request, hello):
    say(f"ignoring SIGTERM and hanging on request {request['id']}")
    while True:
        time.sleep(3600)


play(misbehave)
