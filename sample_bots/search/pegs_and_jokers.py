#!/usr/bin/env python3
"""A Pegs and Jokers search bot: determinized look-ahead over the next turns.

    referee play pegs-and-jokers --bot ".venv/bin/python sample_bots/search/pegs_and_jokers.py" \\
                                 --bot ".venv/bin/python sample_bots/heuristic/pegs_and_jokers.py"

Options as every search bot: ``--budget-ms N`` (default 100), ``--seed N``,
``--rollouts N``, ``--verbose`` (sample_bots/search/pimc.py).

The board is public; what a seat cannot see is the other hands and the
order of the draw pile.  The heuristic bot (sample_bots/heuristic/
pegs_and_jokers.py) guesses how likely each of our pegs is to be hit next
turn from average hands.  This bot looks instead: for the heuristic's best
few moves (its 1-ply score ranks them), on each of many states sampled by
the engine's determinizer (``GameSpec.determinize``: the other hands and the
draw pile drawn among the cards this seat has not seen), the move is
played and the next players (the whole round at 4 players, the next
``--horizon`` at 6 and 8) play their turns with the heuristic's rule on
their sampled hands — an opponent holding the card that hits our peg hits
it.  The resulting board is scored by the heuristic's evaluation (our
team's progress minus theirs, discounted by the danger of the next hits),
less the worth in hand of the card the move spends; the move with the
best mean over the samples is played.

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
GAME = "pegs-and-jokers"
heuristic = load_heuristic("pegs_and_jokers.py")

#: Moves searched: the heuristic's best this many (by its 1-ply score).
CANDIDATES = 4
#: Turns of the other players simulated after ours, at most (the whole round at 4 players).
HORIZON = 3
#: The look-ahead overrides the heuristic's best move only when its choice is better by
#: this many standard errors over the samples both were tried on (a few noisy samples
#: must not move a peg into danger the rule avoids).
MIN_Z = 2.0
#: A won game is worth more than any board.
WIN_VALUE = 10_000.0


class NoTracker:
    def see(self, event: Mapping[str, Any]) -> None:
        pass


class PegsPlug:
    def __init__(self, team: int, teams: int) -> None:
        self.team = team
        self.teams = teams

    def tracker(self, view: View) -> NoTracker:
        return NoTracker()

    def rollout_action(self, state: GameState, legal: list[str], rng: random.Random, tracker: Any) -> str:
        seat = state.to_act()
        assert seat is not None
        return heuristic.decide(Request(0, seat, "move", state.observe(seat), legal, 0))

    def leaf_value(self, event: Mapping[str, Any], team: int) -> float | None:
        if event["type"] == "game_over":
            winners = event["winners"]
            return WIN_VALUE if team in winners else -WIN_VALUE if winners else 0.0
        return None

    def horizon_value(self, state: GameState, team: int) -> float:
        seat = state.to_act()
        obs = state.observe(0 if seat is None else seat)
        return float(heuristic.Board(obs).score(team))


def ranked(state: dict, legal: list[str]) -> list[tuple[float, str]]:
    """The heuristic's 1-ply values of every legal action, best first."""
    board = heuristic.Board(state)
    team = state["seat"] % 2
    in_start = state["pegs"][state["colour"]].count("S")
    out = []
    for action in legal:
        after = board.copy()
        after.apply(action)
        out.append((after.score(team) - heuristic.card_worth(heuristic.card_of(action), in_start), action))
    out.sort(key=lambda x: -x[0])
    return out


def make_choose(spec: Any, horizon: int) -> Any:
    def choose(request: Request, view: View, rng: random.Random, budget: Budget) -> str:
        state = request.state
        team = state["seat"] % 2
        order = ranked(state, request.legal)
        candidates = [a for _, a in order[:CANDIDATES]]
        if len(candidates) == 1:
            return candidates[0]
        in_start = state["pegs"][state["colour"]].count("S")
        bonus = {a: -heuristic.card_worth(heuristic.card_of(a), in_start) for a in candidates}
        steps = min(state["players"] - 1, horizon)
        plug = PegsPlug(team, 2)
        result = pimc(spec, view, candidates, plug, team, rng, budget, max_steps=steps, bonus=bonus,
                      prior=candidates[0], min_z=MIN_Z, abandon_late=True)
        if not result.means:  # not one rollout in the budget: the heuristic's choice
            return candidates[0]
        return result.action
    return choose


def main(argv: list[str] | None = None) -> int:
    import argparse

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--horizon", type=int, default=HORIZON)
    known, rest = extra.parse_known_args(argv)
    args = parse_args("Pegs and Jokers search bot (determinized look-ahead)", rest)
    bot = SearchBot(GAME, args, lambda *a: choose(*a), heuristic.decide)
    choose = make_choose(bot.spec, max(1, known.horizon))
    return bot.run(NAME)


if __name__ == "__main__":
    sys.exit(main())
