#!/usr/bin/env python3
"""(9) Plays legally, then answers with a well-formed action of the game that is not legal now:
one it was offered earlier (any game), else a card-game action outside the legal list."""
from _base import answer, play, say, write

seen = []  # every action offered so far, in order


def remember(request):
    seen.extend(a for a in request["legal"] if a not in seen)


def misbehave(request, hello):
    stale = [a for a in seen if a not in request["legal"]]
    choice = stale[0] if stale else next(a for a in ("2C", "3C", "4C", "pass", "1") if a not in request["legal"])
    say(f"answering request {request['id']} with an illegal action {choice}")
    write(answer(request, choice))


play(misbehave, on_request=remember)
