#!/usr/bin/env python3
"""(15) Plays legally, then allocates (and touches) memory without bound."""
import time

from _base import play, say


def misbehave(request, hello):
    say(f"allocating without bound on request {request['id']}")
    blocks = []
    while True:
        blocks.append(b"\x01" * (16 << 20))
        if len(blocks) % 8 == 0:
            say(f"holding {len(blocks) * 16} MB")
        time.sleep(0.001)


play(misbehave)
