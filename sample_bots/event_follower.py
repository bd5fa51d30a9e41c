#!/usr/bin/env python3
"""A bot that follows the events, for any of the three games, and plays the first legal action
that is not a ``pass`` (so that deals get played).

    referee play schmier --bot ".venv/bin/python sample_bots/event_follower.py" \\
                         --bot "python3 sample_bots/random_bot.py" \\
                         --bot "python3 sample_bots/random_bot.py"

It knows no game: it keeps its own hand from the event vocabulary every game
shares (docs/protocol.md, "Events every game sends") and checks it against
the ``hand`` in each request's ``state``:

* ``hand`` {seat, cards} (to you alone): your new hand; ``deal`` starts a deal;
* ``draw`` {seat, count} (public) and, when count ≥ 1, ``drawn`` {seat, cards}
  (to that seat alone): the cards you drew join your hand;
* any event with your ``seat`` and a ``card`` (a card played, discarded,
  put face up) takes that card out of your hand;
* ``redeal`` {deal, dealer, redeals}: an all-pass deal, a new ``deal`` follows;
* ``game_over`` {status, winners, scores, reason, detail}: the last event, the
  same outcome as the ``game_over`` message.

If its hand ever differs from the request's, it says so on stderr and exits
with status 3 (the referee records a crash with that stderr line).  At the end
it writes one summary line to stderr.  Needs the project installed in that
Python (``.venv/bin/python`` after the README's set-up) for ``protocol.bot``.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

from protocol.bot import Request, run

NAME = "event-follower"
me: dict[str, Any] = {"seat": None}
hand: Counter[str] = Counter()
seen: Counter[str] = Counter()
last_draw: dict[str, Any] | None = None
final: dict[str, Any] | None = None
checked = 0


def fail(text: str) -> None:
    print(f"{NAME}: {text}", file=sys.stderr, flush=True)
    sys.exit(3)


def on_hello(hello: dict[str, Any]) -> None:
    me["seat"] = hello["seat"]


def on_event(event: dict[str, Any]) -> None:
    global last_draw, final
    kind = event["type"]
    seen[kind] += 1
    mine = event.get("seat") == me["seat"]
    before, last_draw = last_draw, event if kind == "draw" else None
    if kind == "hand" and mine:
        hand.clear()
        hand.update(event["cards"])
    elif kind == "drawn":
        if not mine:
            fail(f"got another seat's drawn cards: {event}")
        if before is None or before["seat"] != event["seat"] or before["count"] != len(event["cards"]):
            fail(f"drawn {event} does not follow its public draw (the event before: {before})")
        hand.update(event["cards"])
    elif kind == "game_over":
        final = event
    elif mine and isinstance(event.get("card"), str):
        if hand[event["card"]] < 1:
            fail(f"{kind} of {event['card']}, which is not in my hand")
        hand[event["card"]] -= 1


def decide(request: Request) -> str:
    global checked
    expected = Counter(request.state["hand"])
    if +hand != expected:
        fail(f"request {request.id}: my hand from the events is {sorted((+hand).elements())}, "
             f"the state says {sorted(expected.elements())}")
    checked += 1
    return next((a for a in request.legal if a != "pass"), request.legal[0])


def on_game_over(message: dict[str, Any]) -> None:
    outcome = message["outcome"]
    if final is None:
        fail("no game_over event before the game_over message")
    if {key: final.get(key) for key in outcome} != outcome:
        fail(f"the game_over event {final} is not the outcome {outcome}")
    print(f"{NAME}: ok: hand checked at {checked} requests; events "
          + " ".join(f"{k}={v}" for k, v in sorted(seen.items())), file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(run(decide, name=NAME, on_hello=on_hello, on_event=on_event, on_game_over=on_game_over))
