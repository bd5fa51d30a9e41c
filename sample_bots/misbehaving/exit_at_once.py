#!/usr/bin/env python3
"""(1) Exits with code 3 at once, before the handshake."""
import sys

sys.stderr.write("exit_at_once: exiting with code 3 before saying ready\n")
sys.exit(3)
