#!/usr/bin/env python3
"""(16) Plays legally, then closes its stdout and keeps running."""
import os
import time

from _base import play, say


def misbehave(request, hello):
    say(f"closing stdout on request {request['id']}")
    os.close(1)
    time.sleep(3600)


play(misbehave)
