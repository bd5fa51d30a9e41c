#!/usr/bin/env python3
"""(12) Plays legally, then writes to stderr as fast as it can (gigabytes, given time) and never answers.

``--seconds S`` stops the flood after S seconds (default: never)."""
import os
import time

from _base import option, play, say


def misbehave(request, hello):
    say(f"flooding stderr on request {request['id']}")
    block = (b"stderr flood " * 80 + b"\n") * 1024  # ~1 MB of 1 KB lines
    stop = time.monotonic() + option("--seconds", 1e9, float)
    written = 0
    while time.monotonic() < stop:
        written += os.write(2, block)
    say(f"wrote {written} bytes of stderr")
    time.sleep(3600)


play(misbehave)
