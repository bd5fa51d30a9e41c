#!/usr/bin/env python3
"""Prints the resource limits, session, REFEREE_BOT_ID, uid/gid and pid it was started with to stderr, then exits 0."""
import os
import resource
import sys

for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_CORE"):
    soft, hard = resource.getrlimit(getattr(resource, name))
    sys.stderr.write(f"{name} {soft} {hard}\n")
sys.stderr.write(f"session {os.getsid(0) == os.getpid()} group {os.getpgid(0) == os.getpid()}\n")
sys.stderr.write(f"bot_id {os.environ.get('REFEREE_BOT_ID', '')}\n")
sys.stderr.write(f"uid {os.getuid()} {os.getgid()}\n")
sys.stderr.write(f"pid {os.getpid()}\n")
sys.exit(0)
