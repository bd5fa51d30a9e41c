"""Shared loop of the misbehaving test bots (standard library only).

Each bot in this folder plays legally at first -- it answers the first
``--after N`` requests (default 2) with their first legal action -- so that
its misbehaviour happens mid-game, then calls its ``misbehave`` function on
every later request.  Before misbehaving it says what it is about to do on
stderr, so a test can find that line in the fault's stderr tail.
Unknown command-line arguments are ignored (tests add markers).
"""

import json
import os
import sys

NAME = os.path.splitext(os.path.basename(sys.argv[0]))[0]


def option(flag, default, kind=int):
    args = sys.argv[1:]
    if flag in args:
        return kind(args[args.index(flag) + 1])
    return default


def say(text):
    """One line on stderr, flushed."""
    sys.stderr.write(f"{NAME}: {text}\n")
    sys.stderr.flush()


def write(data):
    """Raw bytes to stdout in one system call (atomic up to 4096 bytes on a pipe)."""
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def answer(request, action=None):
    action = request["legal"][0] if action is None else action
    return json.dumps({"type": "action", "id": request["id"], "action": action}).encode() + b"\n"


def play(misbehave, *, after=None, on_hello=None, on_request=None, events=False, ready_name=None):
    """Answer the first ``after`` requests legally, then hand each request to ``misbehave``
    (``on_request`` sees every request first; ``ready_name`` replaces the script's name in ``ready``)."""
    after = option("--after", 2) if after is None else after
    answered = 0
    hello = None
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            hello = msg
            if on_hello is not None:
                on_hello(msg)
            write(json.dumps({"type": "ready", "name": ready_name or NAME, "events": events}).encode() + b"\n")
        elif kind == "request":
            if on_request is not None:
                on_request(msg)
            if answered < after:
                write(answer(msg))
            else:
                misbehave(msg, hello)
            answered += 1
        elif kind == "game_over":
            return 0
    return 0
