"""A bot that plays a fixed list of actions: ``replay_bot.py FILE``, FILE a JSON list per seat."""

import json
import sys

from protocol.bot import Request, run

with open(sys.argv[1], encoding="utf-8") as f:
    ACTIONS = json.load(f)


def decide(request: Request) -> str:
    return ACTIONS[request.seat].pop(0)


if __name__ == "__main__":
    sys.exit(run(decide, name="replay"))
