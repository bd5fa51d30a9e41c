#!/usr/bin/env python3
"""Answers its first request with the bytes of the file named by ``--reply PATH`` (plus a newline).

In those bytes ``{ID}`` becomes the request's id and ``{LEGAL}`` its first legal
action as a JSON string, so near-valid replies can be built.  Later requests
get legal answers.  Used by the decoder fuzz test."""
import json

from _base import answer, option, play, say, write

REPLY = option("--reply", "", str)


def misbehave(request, hello):
    with open(REPLY, "rb") as f:
        data = f.read()
    data = data.replace(b"{ID}", str(request["id"]).encode())
    data = data.replace(b"{LEGAL}", json.dumps(request["legal"][0]).encode())
    say(f"replying to request {request['id']} with {len(data)} bytes from {REPLY}")
    write(data + b"\n")


first = True


def reply(request, hello):
    global first
    if first:
        first = False
        misbehave(request, hello)
    else:
        write(answer(request))


play(reply, after=0)
