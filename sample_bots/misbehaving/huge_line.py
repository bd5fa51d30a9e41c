#!/usr/bin/env python3
"""(10) Plays legally, then writes a 100 MB line with no newline (in 1 MB pieces) and waits."""
import time

from _base import option, play, say, write


def misbehave(request, hello):
    mb = option("--mb", 100)
    say(f"writing a {mb} MB line without a newline for request {request['id']}")
    write(b'{"type":"action","id":%d,"action":"' % request["id"])
    piece = b"x" * (1 << 20)
    for _ in range(mb):
        write(piece)
    say("done writing")
    time.sleep(3600)


play(misbehave)
