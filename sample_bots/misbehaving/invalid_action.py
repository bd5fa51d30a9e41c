#!/usr/bin/env python3
"""Plays legally, then answers with text that is no action of the game at all."""
from _base import answer, play, say, write


def misbehave(request, hello):
    say(f"answering request {request['id']} with text that is no action")
    write(answer(request, "not-an-action"))


play(misbehave)
