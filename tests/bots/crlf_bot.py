#!/usr/bin/env python3
"""Test bot: every line it writes ends in CRLF (\\r\\n); plays the first legal action."""
import json
import sys

out = sys.stdout.buffer
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        out.write(b'{"type":"ready","name":"crlf","events":true}\r\n')
    elif msg["type"] == "request":
        out.write(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}).encode() + b"\r\n")
    elif msg["type"] == "game_over":
        break
    out.flush()
