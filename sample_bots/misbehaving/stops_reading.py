#!/usr/bin/env python3
"""Says ready (asking for events), shrinks its stdin pipe to one page and never reads again.

The referee's writes to it then block: its reason is `not_reading`."""
import contextlib
import fcntl
import json
import os
import sys
import time

sys.stdin.buffer.raw.read(65536)  # the hello line (nothing else has been sent yet)
with contextlib.suppress(OSError):
    fcntl.fcntl(0, fcntl.F_SETPIPE_SZ, 4096)
os.write(1, json.dumps({"type": "ready", "name": "stops_reading", "events": True}).encode() + b"\n")
sys.stderr.write("stops_reading: ready, and I will never read stdin again\n")
sys.stderr.flush()
time.sleep(3600)
