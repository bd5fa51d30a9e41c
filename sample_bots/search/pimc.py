"""Perfect-information Monte Carlo (PIMC) search, shared by the search bots.

The idea (Ginsberg's GIB, Buro et al.'s Kermit; ../../docs/reference-bots.md):
a seat cannot see the other hands, so it *samples* full states that agree
with everything it was sent — the engine's own determinizer,
``GameSpec.determinize(View, rng)`` — and on each sample ("world") plays
every candidate action out with a cheap policy for all seats.  The action
with the best mean value over the worlds is chosen.  Every candidate is
tried on the same worlds, and with the same random numbers for its rollout
(common random numbers), so the comparison between actions is sharper than
the noise of the worlds.

This module knows no game.  A game is a ``Plug``:

* ``rollout_action(state, legal, rng, tracker)`` — the cheap policy every
  seat follows in a rollout;
* ``tracker(view)`` / ``Tracker.see(event)`` — what the policy remembers
  while a rollout runs (the current trick), built from the events ``apply``
  returns, so a trick-taking rollout never calls the (slower) ``observe``;
* ``leaf_value(event, team)`` — a value for ``team`` when an event ends the
  rollout (Back Alley's and Schmier's ``deal_score``: the deal's score
  difference), else ``None``; ``horizon_value(state, team)`` for a rollout
  cut by ``max_steps`` (Pegs and Jokers' board evaluation).

Budget: the search stops at its deadline (``Budget``), checked before every
rollout and before every step of one (``abandon_late``: a rollout still
running at the deadline is thrown away), and starts no
new sample that the slowest sample so far would carry past it; and it stops
after ``max_rollouts`` rollouts, the only stop that does not depend on the
clock: with a cap that binds before the deadline a seeded bot plays
identically on any machine.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from protocol.bot import Request, run
from referee.games import get_game
from referee.games.base import GameSpec, GameState, InconsistentView, View

#: Stop a search this long before its budget ends, and this share of the budget
#: earlier still: the answer must still be written, read and checked by the
#: referee within the budget, on a machine that may be busy.
MARGIN_S = 0.010
MARGIN_SHARE = 0.15


class Tracker(Protocol):
    def see(self, event: Mapping[str, Any]) -> None: ...


class Plug(Protocol):
    """What PIMC needs to know about one game."""

    def tracker(self, view: View) -> Tracker: ...

    def rollout_action(self, state: GameState, legal: list[str], rng: random.Random,
                       tracker: Tracker) -> str: ...

    def leaf_value(self, event: Mapping[str, Any], team: int) -> float | None: ...

    def horizon_value(self, state: GameState, team: int) -> float: ...


@dataclass
class Budget:
    """When a search must stop: a wall-clock deadline and a rollout cap."""

    deadline: float
    max_rollouts: int = 1_000_000
    rollouts: int = 0

    def spent(self) -> bool:
        return self.rollouts >= self.max_rollouts or time.perf_counter() >= self.deadline


@dataclass
class SearchResult:
    action: str
    means: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    worlds: int = 0
    rollouts: int = 0


class Late(Exception):
    """A rollout still running at the deadline (with ``abandon_late``): thrown away."""


def rollout(state: GameState, plug: Plug, team: int, rng: random.Random, tracker: Tracker,
            events: list[Any], max_steps: int, deadline: float | None = None) -> float:
    """Play ``state`` on with the plug's policy until an event has a leaf value, the game
    ends or ``max_steps`` actions were played; the value for ``team``.  With a
    ``deadline``, raises ``Late`` when a step would start past it."""
    for ev in events:
        data = ev.data
        v = plug.leaf_value(data, team)
        if v is not None:
            return v
        tracker.see(data)
    for _ in range(max_steps):
        if state.to_act() is None:
            return plug.horizon_value(state, team)
        if deadline is not None and time.perf_counter() >= deadline:
            raise Late
        legal = state.legal_actions()
        action = legal[0] if len(legal) == 1 else plug.rollout_action(state, legal, rng, tracker)
        for ev in state.apply(action):
            data = ev.data
            v = plug.leaf_value(data, team)
            if v is not None:
                return v
            tracker.see(data)
    return plug.horizon_value(state, team)


def pimc(spec: GameSpec, view: View, candidates: Sequence[str], plug: Plug, team: int,
         rng: random.Random, budget: Budget, max_steps: int = 10_000,
         bonus: Mapping[str, float] | None = None, prior: str | None = None,
         min_z: float = 0.0, abandon_late: bool = False) -> SearchResult:
    """Mean rollout value of each candidate over determinized worlds, until the budget ends.

    Every world is used for every candidate (in a shuffled order, so a world cut by
    the deadline favours none), each candidate's rollout seeded alike.  ``bonus`` is
    added to a candidate's mean (a value the rollouts do not see, as a card's worth
    in hand).  With a ``prior`` (a rule's choice among the candidates), the best
    mean replaces it only if it is better on the worlds both were tried in by
    ``min_z`` standard errors of the paired difference: few noisy worlds then keep
    the rule's move.  ``abandon_late`` throws away a rollout still running at the
    deadline (long rollouts would overrun it) instead of finishing it."""
    totals = dict.fromkeys(candidates, 0.0)
    counts = dict.fromkeys(candidates, 0)
    per_world: list[dict[str, float]] = []
    worlds = 0
    order = list(candidates)
    deadline = budget.deadline if abandon_late else None
    sampling = 0.0  # the longest a sample took: no new world unless one fits before the deadline
    while not budget.spent() and time.perf_counter() + sampling < budget.deadline:
        began = time.perf_counter()
        world = spec.determinize(view, rng)
        sampling = max(sampling, time.perf_counter() - began)
        worlds += 1
        world_seed = rng.getrandbits(64)
        rng.shuffle(order)
        values: dict[str, float] = {}
        per_world.append(values)
        for action in order:
            if budget.spent():
                break
            state = world.clone()
            events = state.apply(action)
            tracker = plug.tracker(view)
            try:
                value = rollout(state, plug, team, random.Random(world_seed), tracker, events, max_steps,
                                deadline)
            except Late:
                break
            totals[action] += value
            counts[action] += 1
            values[action] = value
            budget.rollouts += 1
    extra = bonus or {}
    means = {a: totals[a] / counts[a] + extra.get(a, 0.0) for a in candidates if counts[a]}
    if not means:
        return SearchResult(prior or candidates[0], {}, counts, worlds, budget.rollouts)
    best = max(candidates, key=lambda a: (means.get(a, float("-inf")), -candidates.index(a)))
    if prior is not None and best != prior and not _surely_better(per_world, best, prior, extra, min_z):
        best = prior
    return SearchResult(best, means, counts, worlds, budget.rollouts)


def _surely_better(per_world: list[dict[str, float]], a: str, b: str, bonus: Mapping[str, float],
                   min_z: float) -> bool:
    """Is ``a`` better than ``b`` by ``min_z`` standard errors, on the worlds both were tried in?"""
    diffs = [w[a] - w[b] for w in per_world if a in w and b in w]
    n = len(diffs)
    if n < 3:
        return False
    shift = bonus.get(a, 0.0) - bonus.get(b, 0.0)
    mean = sum(diffs) / n + shift
    var = sum((d - mean + shift) ** 2 for d in diffs) / (n - 1)
    if var == 0:
        return mean > 0
    return mean / (var / n) ** 0.5 >= min_z


# --- the bot around a search -------------------------------------------------------


Decide = Callable[[Request], str]


def parse_args(description: str, argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--budget-ms", type=int, default=100,
                   help="thinking time per decision (default 100); never more than a quarter of "
                        "the request's time_ms")
    p.add_argument("--seed", type=int, default=None,
                   help="seed the search: each decision's random numbers come from the seed and "
                        "the request, so equal requests get equal answers whenever --rollouts "
                        "(not the clock) ends the search")
    p.add_argument("--rollouts", type=int, default=1_000_000,
                   help="at most this many rollouts per decision (default: unlimited, the clock "
                        "decides)")
    p.add_argument("--verbose", action="store_true", help="print each search's figures on stderr")
    args = p.parse_args(argv)
    if args.budget_ms < 1 or args.rollouts < 1:
        p.error("--budget-ms and --rollouts must be ≥ 1")
    return args


class SearchBot:
    """The protocol side of a search bot: views, seeds, budgets, events per table.

    ``choose(request, view, rng, budget)`` is the game's decision; it is called for
    every request with more than one legal action."""

    def __init__(self, game: str, args: argparse.Namespace,
                 choose: Callable[[Request, View, random.Random, Budget], str],
                 fallback: Decide) -> None:
        self.spec = get_game(game)
        self.game = game
        self.args = args
        self.choose = choose
        self.fallback = fallback
        self.warned = False
        self.events: dict[int, list[Mapping[str, Any]]] = {}
        self.options: dict[int, dict[str, Any]] = {}
        self.seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(64)

    # hooks (tables=1: the table is always 0)
    def on_hello(self, hello: dict[str, Any], table: int = 0) -> None:
        if hello.get("game") != self.game:
            raise SystemExit(f"this bot plays {self.game}, not {hello.get('game')!r}")
        self.events[table] = []
        self.options[table] = self.spec.normalize_options(hello.get("options") or {})

    def on_event(self, event: dict[str, Any], table: int = 0) -> None:
        self.events.setdefault(table, []).append(event)

    def decide(self, request: Request) -> str:
        start = time.perf_counter()
        legal = request.legal
        if len(legal) == 1:
            return legal[0]
        budget_s = min(self.args.budget_ms, request.time_ms / 4) / 1000
        budget = Budget(start + max(0.001, budget_s * (1 - MARGIN_SHARE) - MARGIN_S), self.args.rollouts)
        key = json.dumps([self.seed, request.id, request.state], sort_keys=True, separators=(",", ":"))
        rng = random.Random(key)
        view = View(seat=request.seat, options=self.options.get(request.table, {}),
                    state=request.state, events=tuple(self.events.get(request.table, ())))
        try:
            action = self.choose(request, view, rng, budget)
        except (InconsistentView, NotImplementedError) as exc:
            # No world to search (a view the determinizer cannot fit): play the heuristic's move.
            if not self.warned:
                print(f"{self.game} search: {exc}; playing the heuristic's moves instead",
                      file=sys.stderr)
                self.warned = True
            action = self.fallback(request)
        if self.args.verbose:
            print(f"{request.decision} n={request.id}: {action} after {budget.rollouts} rollouts, "
                  f"{1000 * (time.perf_counter() - start):.0f} ms", file=sys.stderr)
        return action

    def run(self, name: str) -> int:
        return run(self.decide, name=name, on_hello=self.on_hello, on_event=self.on_event)


def load_heuristic(game_file: str) -> Any:
    """The frozen heuristic rules of a game (``rules_<game>.py`` in this folder, a copy of
    sample_bots/heuristic/<game>.py), as a module: the search bots use its decisions where
    they do not search, as rollout policies and as a fallback."""
    import importlib

    return importlib.import_module("rules_" + game_file.removesuffix(".py"))
