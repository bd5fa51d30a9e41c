#!/usr/bin/env python3
"""(11) Plays legally, then answers a request and floods stdout with extra lines after the answer.

The answer and the first extra lines go out in one write (atomic on a pipe),
then extra lines follow for as long as the pipe takes them."""
from _base import answer, play, say, write

EXTRA = b'{"type":"log","text":"still thinking"}\n'


def misbehave(request, hello):
    say(f"answering request {request['id']} and then flooding stdout")
    first = answer(request)
    write(first + EXTRA * ((4096 - len(first)) // len(EXTRA)))
    block = EXTRA * 1000
    while True:
        write(block)


play(misbehave)
