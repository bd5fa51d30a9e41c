#!/usr/bin/env python3
"""(2) Reads `hello` and never answers it."""
import sys
import time

sys.stdin.readline()
sys.stderr.write("silent_handshake: got hello, will never say ready\n")
sys.stderr.flush()
time.sleep(3600)
