#!/usr/bin/env python3
"""(9) Plays legally, then answers with a well-formed action of the card games that is not legal now."""
from _base import answer, play, say, write

# Card-game actions (a card, a bid): one of them is always outside a request's legal list.
CANDIDATES = ("2C", "3C", "4C", "5C", "pass", "1")


def misbehave(request, hello):
    choice = next(a for a in CANDIDATES if a not in request["legal"])
    say(f"answering request {request['id']} with an illegal action {choice}")
    write(answer(request, choice))


play(misbehave)
