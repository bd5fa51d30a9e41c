#!/usr/bin/env python3
"""(5) Plays legally, then answers a legal action 0.3 s after the decision time limit."""
import time

from _base import answer, play, say, write


def misbehave(request, hello):
    late = request["time_ms"] / 1000 + 0.3
    say(f"answering request {request['id']} {late:.1f}s late")
    time.sleep(late)
    write(answer(request))


play(misbehave)
