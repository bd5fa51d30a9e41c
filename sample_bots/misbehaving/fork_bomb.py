#!/usr/bin/env python3
"""(18) Plays legally, then forks many processes (each leaves the session and sleeps), and plays on.

Bounded for safety on shared machines: at most ``--max N`` children (default 2000)."""
import os
import time

from _base import answer, option, play, say, write

forked = 0


def misbehave(request, hello):
    global forked
    limit = option("--max", 2000)
    say(f"forking up to {limit} processes on request {request['id']}")
    while forked < limit:
        try:
            pid = os.fork()
        except OSError as exc:
            say(f"fork failed after {forked}: {exc}")
            break
        if pid == 0:
            try:
                os.setsid()
                time.sleep(600)
            finally:
                os._exit(0)
        forked += 1
    write(answer(request))


play(misbehave)
