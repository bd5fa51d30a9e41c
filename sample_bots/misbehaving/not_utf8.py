#!/usr/bin/env python3
"""(17) Plays legally, then answers with bytes that are not UTF-8."""
from _base import play, say, write


def misbehave(request, hello):
    say(f"answering request {request['id']} with bytes that are not UTF-8")
    write(b'{"type":"action","id":%d,"action":"\xff\xfe\xc0"}\n' % request["id"])


play(misbehave)
