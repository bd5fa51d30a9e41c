#!/usr/bin/env python3
"""(15) Plays legally, then allocates (and touches) memory without bound.

With ``--spread N`` it instead starts N children that each hold 96 MB (so no
single process is large), once, and plays on slowly."""
import os
import time

from _base import answer, option, play, say, write

spread_done = False


def spread(request, n):
    global spread_done
    if spread_done:  # once: then play on, unhurried (the game outlasts the watchdog's period)
        time.sleep(0.05)
        write(answer(request))
        return
    spread_done = True
    say(f"starting {n} children of 96 MB each on request {request['id']}")
    for _ in range(n):
        if os.fork() == 0:
            try:
                block = b"\x01" * (96 << 20)  # written, so its pages are really resident
                time.sleep(600)
                del block  # held, by this name, through the whole sleep
            finally:
                os._exit(0)
    write(answer(request))


def misbehave(request, hello):
    n = option("--spread", 0)
    if n:
        spread(request, n)
        return
    say(f"allocating without bound on request {request['id']}")
    blocks = []
    while True:
        blocks.append(b"\x01" * (16 << 20))
        if len(blocks) % 8 == 0:
            say(f"holding {len(blocks) * 16} MB")
        time.sleep(0.001)


play(misbehave)
