#!/usr/bin/env python3
"""A Schmier search bot: perfect-information Monte Carlo over determinized deals.

    referee play schmier --bot ".venv/bin/python sample_bots/search/schmier.py" \\
                         --bot ".venv/bin/python sample_bots/heuristic/schmier.py" \\
                         --bot "python3 sample_bots/random_bot.py"

Options as every search bot: ``--budget-ms N`` (default 100), ``--seed N``,
``--rollouts N``, ``--verbose`` (sample_bots/search/pimc.py).

Play (``play``): for every legal card, on each of many deals sampled by the
engine's determinizer (``GameSpec.determinize``: the other hands and the
face-down discards and stock drawn among the cards this seat has not seen,
respecting voids, discard and draw counts), the rest of the deal is played
out by all six seats with a cheap greedy policy — lead at random; when a
teammate has the trick, schmier a point card onto it; else win it as
cheaply as possible, or throw the card that gives the least away — and the
card with the best mean ``our deal score − the mean of the other two
teams'`` is played.

Bidding, trump and the exchange are the heuristic bot's decisions
(sample_bots/heuristic/schmier.py): the search is in the play.

Needs the project installed in the Python that runs it (``pip install -e .``).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pimc import Budget, SearchBot, load_heuristic, parse_args, pimc  # noqa: E402

from protocol.bot import Request  # noqa: E402
from referee.games.base import GameState, View  # noqa: E402

NAME = "search-v1"
GAME = "schmier"
heuristic = load_heuristic("schmier.py")
SEATS = 6


class Tables:
    """Per-trump card facts, looked up once per card in a rollout."""

    def __init__(self, trump: str) -> None:
        k = heuristic.Cards(trump)
        deck = heuristic.DECK
        self.suit = {c: k.suit(c) for c in deck}
        self.trump_power = {c: k.power(c) for c in deck}  # ≥ 100 for a trump
        self.smear = {c: heuristic.smear_value(k, c) for c in deck}
        self.cheap = {c: heuristic.cheap(k, c) for c in deck}


_TABLES = {t: Tables(t) for t in "CDHS"}


class Trick:
    __slots__ = ("leader", "cards")

    def __init__(self, leader: int, cards: list[str]) -> None:
        self.leader = leader
        self.cards = cards

    def see(self, event: Mapping[str, Any]) -> None:
        kind = event["type"]
        if kind == "play":
            if not self.cards:
                self.leader = event["seat"]
            self.cards.append(event["card"])
        elif kind == "trick":
            self.cards = []


class SchmierPlug:
    def __init__(self, trump: str) -> None:
        self.t = _TABLES[trump]

    def tracker(self, view: View) -> Trick:
        trick = view.state.get("trick") or {"leader": -1, "cards": []}
        return Trick(trick["leader"], list(trick["cards"]))

    def rollout_action(self, state: GameState, legal: list[str], rng: random.Random, tracker: Any) -> str:
        cards = tracker.cards
        if not cards:
            return legal[rng.randrange(len(legal))]
        t = self.t
        suit, tp = t.suit, t.trump_power
        led = suit[cards[0]]

        def power(c: str) -> int:
            p = tp[c]
            return p if p >= 100 or suit[c] == led else -1

        best, win = -1, 0
        for i, c in enumerate(cards):
            p = power(c)
            if p > best:
                best, win = p, i
        seat = state.to_act()
        assert seat is not None
        winner = (tracker.leader + win) % SEATS
        if (winner - seat) % 3 == 0:  # a teammate has it: schmier
            return max(legal, key=t.smear.__getitem__)
        winners = [c for c in legal if power(c) > best]
        if winners:
            return min(winners, key=power)
        return min(legal, key=t.cheap.__getitem__)

    def leaf_value(self, event: Mapping[str, Any], team: int) -> float | None:
        kind = event["type"]
        if kind == "deal_score":
            d = event["delta"]
            return float(d[team] - (sum(d) - d[team]) / 2)
        if kind in ("redeal", "game_over"):
            return 0.0
        return None

    def horizon_value(self, state: GameState, team: int) -> float:
        return 0.0


def make_choose(spec: Any) -> Any:
    def choose(request: Request, view: View, rng: random.Random, budget: Budget) -> str:
        if request.decision != "play":
            return heuristic.decide(request)
        state = request.state
        plug = SchmierPlug(state["trump"])
        result = pimc(spec, view, list(request.legal), plug, state["team"], rng, budget, abandon_late=True)
        return result.action if result.means else heuristic.decide(request)
    return choose


def main(argv: list[str] | None = None) -> int:
    args = parse_args("Schmier search bot (PIMC)", argv)
    bot = SearchBot(GAME, args, lambda *a: choose(*a), heuristic.decide)
    choose = make_choose(bot.spec)
    return bot.run(NAME)


if __name__ == "__main__":
    sys.exit(main())
