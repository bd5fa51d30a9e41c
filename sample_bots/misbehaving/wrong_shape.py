#!/usr/bin/env python3
"""(7) Plays legally, then answers with valid JSON of the wrong shape (the id as a string)."""
import json

from _base import play, say, write


def misbehave(request, hello):
    say(f"answering request {request['id']} with a string id")
    write(json.dumps({"type": "action", "id": str(request["id"]), "action": request["legal"][0]}).encode() + b"\n")


play(misbehave)
