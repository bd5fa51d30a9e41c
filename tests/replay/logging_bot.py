#!/usr/bin/env python3
"""A test bot that writes every line it reads from stdin, byte for byte, to its stderr.

Usage: logging_bot.py [SEED] [--no-events] [--reply random|last|illegal|invalid]
(default random from SEED). Its stderr file is then exactly what the referee
sent it, for tests that compare it with what ``referee replay --request`` and
``referee ask`` rebuild. ``illegal`` answers with a well-formed card-game action
outside the legal list, ``invalid`` with text that is no action.
"""

import json
import random
import sys

args = sys.argv[1:]
events = "--no-events" not in args
reply = args[args.index("--reply") + 1] if "--reply" in args else "random"
seeds = [a for a in args if a.isdigit()]
rng = random.Random(int(seeds[0]) if seeds else 0)
out, err = sys.stdout, sys.stderr.buffer

for raw in sys.stdin.buffer:
    err.write(raw)
    err.flush()
    msg = json.loads(raw)
    kind = msg["type"]
    if kind == "hello":
        out.write(json.dumps({"type": "ready", "name": "logger", "events": events}) + "\n")
    elif kind == "request":
        legal = msg["legal"]
        if reply == "last":
            action = legal[-1]
        elif reply == "illegal":
            action = next(a for a in ("2C", "3C", "4C", "pass", "1") if a not in legal)
        elif reply == "invalid":
            action = "no-such-action"
        else:
            action = rng.choice(legal)
        out.write(json.dumps({"type": "action", "id": msg["id"], "action": action}) + "\n")
    elif kind == "game_over":
        break
    out.flush()
