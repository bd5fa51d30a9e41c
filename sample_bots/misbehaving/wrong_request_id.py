#!/usr/bin/env python3
"""(8) Plays legally, then answers a request with the id of the next one."""
import json

from _base import play, say, write


def misbehave(request, hello):
    say(f"answering request {request['id']} as {request['id'] + 1}")
    write(json.dumps({"type": "action", "id": request["id"] + 1, "action": request["legal"][0]}).encode() + b"\n")


play(misbehave)
