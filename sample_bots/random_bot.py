#!/usr/bin/env python3
"""A bot that plays a uniformly random legal action, in any game.

Standard library only and no project imports: copy it anywhere and start from
it.  Usage: random_bot.py [SEED] [--name NAME]

The same SEED gives the same choices, so a game repeats exactly; without one it
plays differently every time.  `referee play` and tournaments fill in ``{seed}``
in a bot command with a seed per game and seat: ``random_bot.py {seed}``.

Protocol (docs/protocol.md): read one JSON object per line from stdin, write
one per line to stdout, flush after each.  stderr is yours for diagnostics.
It says ``"games": "many"`` in ``ready`` (protocol version 2): in a tournament
one process plays game after game, and it exits when its stdin ends.
"""

import json
import random
import sys


def main(argv):
    args = list(argv[1:])
    name = "random"
    if "--name" in args:
        i = args.index("--name")
        name = args[i + 1]
        del args[i : i + 2]
    rng = random.Random(int(args[0]) if args else None)
    out = sys.stdout
    for line in sys.stdin:
        # Only requests need an answer; skip parsing anything else.
        if line.startswith('{"type":"request"'):
            msg = json.loads(line)
            action = rng.choice(msg["legal"])
            out.write(f'{{"type":"action","id":{msg["id"]:d},"action":{json.dumps(action)}}}\n')
            out.flush()
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            # This bot decides from each request alone, so it asks for no events.
            out.write(json.dumps({"type": "ready", "name": name, "events": False, "games": "many"}) + "\n")
            out.flush()
        elif kind == "request":  # same as above, for referees that order keys differently
            action = rng.choice(msg["legal"])
            out.write(json.dumps({"type": "action", "id": msg["id"], "action": action}) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
