#!/usr/bin/env python3
"""(14) Starts a child and a grandchild that outlive it, plays legally, then exits mid-game.

The child stays in the bot's process group; the grandchild is double-forked
and calls setsid(), so it is in no group or session of the bot and its parent
is gone.  Both keep the bot's stdout open.  Their pids go to stderr."""
import os
import subprocess
import sys
import time

from _base import play, say


def start_helpers(hello):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    say(f"child pid {child.pid}")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # intermediate: fork the grandchild, report its pid, exit
        os.close(r)
        gpid = os.fork()
        if gpid == 0:
            os.setsid()
            time.sleep(600)
            os._exit(0)
        os.write(w, str(gpid).encode())
        os._exit(0)
    os.close(w)
    gpid = int(os.read(r, 32))
    os.waitpid(pid, 0)
    say(f"grandchild pid {gpid}")


def misbehave(request, hello):
    say(f"exiting on request {request['id']}, leaving my child and grandchild behind")
    os._exit(0)


play(misbehave, on_hello=start_helpers)
