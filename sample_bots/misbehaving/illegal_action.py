#!/usr/bin/env python3
"""(9) Plays legally, then chooses an action that is not in the legal list."""
from _base import answer, play, say, write


def misbehave(request, hello):
    say(f"answering request {request['id']} with an illegal action")
    write(answer(request, "not-a-legal-action"))


play(misbehave)
