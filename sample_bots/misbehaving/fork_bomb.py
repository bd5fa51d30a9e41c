#!/usr/bin/env python3
"""(18) Plays legally, then forks many processes (each leaves the session and sleeps), and plays on.

Bounded for safety on shared machines: at most ``--max N`` children (default 2000).
With ``--now`` it forks right after the handshake, before any request of its own."""
import os
import sys
import time

from _base import answer, option, play, say, write

forked = 0


def bomb(when):
    global forked
    limit = option("--max", 2000)
    say(f"forking up to {limit} processes {when}")
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


def misbehave(request, hello):
    bomb(f"on request {request['id']}")
    write(answer(request))


if "--now" in sys.argv:  # ready first, then fork while the other seats play, then play on
    sys.stdin.readline()
    write(b'{"type":"ready","name":"fork_bomb","events":false}\n')
    bomb("right after the handshake")
    play(misbehave, after=10**9)
else:
    play(misbehave)
