#!/usr/bin/env python3
"""A Back Alley search bot: perfect-information Monte Carlo over determinized deals.

    referee play back-alley --bot ".venv/bin/python sample_bots/search/back_alley.py" \\
                            --bot ".venv/bin/python sample_bots/heuristic/back_alley.py"

Options: ``--budget-ms N`` (thinking time per decision, default 100),
``--seed N`` (reproducible search), ``--rollouts N`` (a cap on rollouts per
decision: with a cap that binds before the clock, a seeded bot plays the
same on any machine), ``--verbose`` (each search's figures on stderr).

Play (``play``): for every legal card, on each of many deals sampled by the
engine's determinizer (``GameSpec.determinize``: the other hands drawn among
the cards this seat has not seen, respecting the voids shown, the turn-up
and a joker discard), the rest of the deal is played out by every seat with
a cheap greedy policy — lead at random, win the trick as cheaply as
possible unless partner has it, else throw the lowest card — and the card
with the best mean ``deal score of our team − theirs`` is played.

Bidding (``bid``): the candidate bids are the heuristic bot's bid and its
neighbours; each is scored the same way, the rollout's remaining bids made
by the heuristic bot's rule (sample_bots/heuristic/back_alley.py) for the
seat whose turn it is, from that seat's view of the sampled deal.

Needs the project installed in the Python that runs it (``pip install -e .``):
it imports the engine (``referee.games``) and ``protocol.bot``.
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
GAME = "back-alley"
heuristic = load_heuristic("back_alley.py")

RANKS = "23456789TJQKA"


def card_tables(trump: str | None) -> tuple[dict[str, str], dict[str, int]]:
    """The suit each card follows and its strength (jokers are the top trumps, BA-3.3)."""
    suit: dict[str, str] = {}
    power: dict[str, int] = {}
    for s in "SHCD":
        for i, r in enumerate(RANKS):
            suit[r + s] = s
            power[r + s] = i + (100 if s == trump else 0)
    for j, p in (("BJ", 114), ("LJ", 113)):
        suit[j] = trump or "*"
        power[j] = p
    return suit, power


_TABLES = {t: card_tables(t) for t in ("S", "H", "C", "D", None)}


class Trick:
    """The trick in progress, followed through a rollout's events."""

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


class BackAlleyPlug:
    def __init__(self, trump: str | None) -> None:
        self.suit, self.power = _TABLES[trump]
        self.trump = trump

    def tracker(self, view: View) -> Trick:
        trick = view.state.get("trick") or {"leader": -1, "cards": []}
        return Trick(trick["leader"], list(trick["cards"]))

    def rollout_action(self, state: GameState, legal: list[str], rng: random.Random, tracker: Any) -> str:
        if state.decision() == "bid":
            seat = state.to_act()
            assert seat is not None
            return heuristic.bid(heuristic.Deal(state.observe(seat)), legal)
        cards = tracker.cards
        if not cards:
            return legal[rng.randrange(len(legal))]
        suit, power = self.suit, self.power
        led = suit[cards[0]]
        best, win = -1, 0
        for i, c in enumerate(cards):
            p = power[c] if suit[c] == led or power[c] >= 100 else -1
            if p > best:
                best, win = p, i
        seat = state.to_act()
        assert seat is not None
        winner = (tracker.leader + win) & 3

        def low(c: str) -> int:
            return power[c] if suit[c] == led or power[c] >= 100 else power[c] - 50

        if (winner - seat) % 2 == 0:  # partner has it: throw the lowest card
            return min(legal, key=low)
        winners = [c for c in legal if (suit[c] == led or power[c] >= 100) and power[c] > best]
        if winners:
            return min(winners, key=power.__getitem__)
        return min(legal, key=low)

    def leaf_value(self, event: Mapping[str, Any], team: int) -> float | None:
        kind = event["type"]
        if kind == "deal_score":
            ds = event["deal_scores"]
            return float(ds[team] - ds[1 - team])
        if kind in ("redeal", "game_over"):
            return 0.0
        return None

    def horizon_value(self, state: GameState, team: int) -> float:
        return 0.0


def bid_candidates(request: Request) -> list[str]:
    """The heuristic's bid and its neighbours among the legal bids (board only when the
    heuristic says board): the search refines the bid, it does not invent one."""
    legal = request.legal
    h_bid = heuristic.bid(heuristic.Deal(request.state), legal)
    i = legal.index(h_bid)
    cands = {h_bid}
    for j in (i - 1, i + 1):
        if 0 <= j < len(legal) and legal[j] != "board":
            cands.add(legal[j])
    return [b for b in legal if b in cands]


def make_choose(spec: Any) -> Any:
    def choose(request: Request, view: View, rng: random.Random, budget: Budget) -> str:
        state = request.state
        team = state["team"]
        plug = BackAlleyPlug(state["trump"])
        if request.decision == "bid":
            candidates = bid_candidates(request)
            if len(candidates) == 1:
                return candidates[0]
        else:
            candidates = list(request.legal)
        result = pimc(spec, view, candidates, plug, team, rng, budget, abandon_late=True)
        return result.action if result.means else heuristic.decide(request)
    return choose


def main(argv: list[str] | None = None) -> int:
    args = parse_args("Back Alley search bot (PIMC)", argv)
    bot = SearchBot(GAME, args, lambda *a: choose(*a), heuristic.decide)
    choose = make_choose(bot.spec)
    return bot.run(NAME)


if __name__ == "__main__":
    sys.exit(main())
