#!/usr/bin/env python3
"""(6) Plays legally, then answers with a line that is not JSON."""
from _base import play, say, write


def misbehave(request, hello):
    say(f"answering request {request['id']} with broken JSON")
    write(b'{"type": "action", "id": %d, oops\n' % request["id"])


play(misbehave)
