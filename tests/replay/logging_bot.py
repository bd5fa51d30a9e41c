#!/usr/bin/env python3
"""A test bot that writes every line it reads from stdin, byte for byte, to its stderr.

Usage: logging_bot.py [SEED] [--no-events] [--reply random|last|illegal|invalid|partial] [--after K]
(default random from SEED). Its stderr file is then exactly what the referee
sent it, for tests that compare it with what ``referee replay --request`` and
``referee ask`` rebuild. ``illegal`` answers with a well-formed card-game action
outside the legal list, ``invalid`` with text that is no action, ``partial``
with its line but no newline (then it waits); the first K requests (default 0)
are answered at random whatever the mode.
"""

import json
import random
import sys

args = sys.argv[1:]
events = "--no-events" not in args
reply = args[args.index("--reply") + 1] if "--reply" in args else "random"
after = int(args[args.index("--after") + 1]) if "--after" in args else 0
seeds = [a for i, a in enumerate(args) if a.isdigit() and (i == 0 or args[i - 1] != "--after")]
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
        mode = reply if after <= 0 else "random"
        after -= 1
        if mode == "last":
            action = legal[-1]
        elif mode == "illegal":
            action = next(a for a in ("2C", "3C", "4C", "pass", "1") if a not in legal)
        elif mode == "invalid":
            action = "no-such-action"
        else:
            action = rng.choice(legal)
        line = json.dumps({"type": "action", "id": msg["id"], "action": action})
        out.write(line if mode == "partial" else line + "\n")
    elif kind == "game_over":
        break
    out.flush()
