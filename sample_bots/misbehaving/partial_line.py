#!/usr/bin/env python3
"""Plays legally, then writes the first half of an action line (no newline) and exits."""
import sys

from _base import answer, play, say, write


def misbehave(request, hello):
    line = answer(request)
    say(f"writing half an answer to request {request['id']} without a newline, then exiting")
    write(line[: len(line) // 2])
    sys.exit(0)


play(misbehave)
