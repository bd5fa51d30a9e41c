"""Standings from game results: pure, and a function of the results alone.

``compute_standings`` sorts the results by game id before anything else, so
the same set of finished games gives the same standings whatever order they
finished in (ratings are updated game by game, and that order matters).

Per game and team: a team among the winners **won**; when there are no
winners (draw, aborted) every team **drew**; otherwise it **lost**.  In a
forfeit the offending team loses and the others are the winners.

A game's **placing** orders the teams: the winners first (tied), then the
other teams by score, higher first, equal scores tied (after a forfeit, the
offender last); with no winners, all tie.  With two teams placing is just
win/loss; with three it also says which of the two losers did better.

* win rate: wins / games, with a 95 % Wilson interval;
* score difference: the team's score minus the mean of the other teams'
  scores, per game, over games that ended without a forfeit (a forfeit stops
  the scores mid-game), with a 95 % Student-t interval;
* rating: openskill's Plackett–Luce model (one "player" per team, since an
  entrant fills a whole team) fed the placing as ranks;
  ``ordinal = mu - 3 sigma`` orders the table;
* head to head: for each pair of entrants, the games they both played, won
  by the one placed ahead of the other;
* paired (duplicate) comparison: for each pair in a pairing and each deal
  whose every arrangement finished without a forfeit, the mean over the
  arrangements of (A's team score - B's team score): the luck of the cards
  cancels because both sat in every seat with the same cards.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from .results import GameResult
from .stats import Interval, mean_ci, wilson

RATING_MODEL = "openskill PlackettLuce (mu 25, sigma 25/3); ordinal = mu - 3*sigma"


def team_points(result: GameResult, team: int) -> float:
    """1 for a win, 0.5 for a draw, 0 for a loss."""
    if not result.winners:
        return 0.5
    return 1.0 if team in result.winners else 0.0


def placing(result: GameResult) -> list[int]:
    """Rank of each team, 1 = first; equal ranks are ties."""
    k = len(result.teams)
    if not result.winners:
        return [1] * k
    if result.status == "forfeit":
        return [1 if t in result.winners else 2 for t in range(k)]
    others = [t for t in range(k) if t not in result.winners]
    ranks = [1] * k
    for t in others:
        ranks[t] = 2 + sum(result.scores[u] > result.scores[t] for u in others)
    return ranks


def score_differences(result: GameResult) -> list[float]:
    """Per team: own score minus the mean of the other teams' scores."""
    scores = [float(s) for s in result.scores]
    k = len(scores)
    total = math.fsum(scores)
    return [s - (total - s) / (k - 1) for s in scores] if k > 1 else [0.0] * k


@dataclass(slots=True)
class Record:
    """Wins, draws, losses over some games."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, points: float) -> None:
        self.games += 1
        if points == 1.0:
            self.wins += 1
        elif points == 0.0:
            self.losses += 1
        else:
            self.draws += 1

    def to_json(self) -> dict[str, int]:
        return {"games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses}


@dataclass(slots=True)
class EntrantStanding:
    name: str
    record: Record = field(default_factory=Record)
    aborted: int = 0  # among the draws: games stopped by a termination guard
    forfeits: Counter[str] = field(default_factory=Counter)  # own faults, by reason
    opponent_forfeits: int = 0  # games won because another team faulted
    score_diffs: list[float] = field(default_factory=list)
    mu: float = 0.0
    sigma: float = 0.0
    rank: int = 0

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma

    @property
    def win_rate(self) -> Interval:
        return wilson(self.record.wins, self.record.games)

    @property
    def score_diff(self) -> Interval:
        return mean_ci(self.score_diffs)

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "name": self.name,
            **self.record.to_json(),
            "aborted": self.aborted,
            "forfeits": sum(self.forfeits.values()),
            "forfeits_by_reason": dict(sorted(self.forfeits.items())),
            "opponent_forfeits": self.opponent_forfeits,
            "win_rate": self.win_rate.to_json(),
            "score_diff": {**self.score_diff.to_json(), "games": len(self.score_diffs)},
            "rating": {"mu": round(self.mu, 6), "sigma": round(self.sigma, 6),
                       "ordinal": round(self.ordinal, 6)},
        }


@dataclass(slots=True)
class PairedComparison:
    """A against B on duplicate deals; ``diffs`` are per deal, A minus B."""

    a: str
    b: str
    diffs: list[float] = field(default_factory=list)
    excluded_deals: int = 0  # complete deals left out because of a forfeit

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "deals": len(self.diffs),
            "a_better": sum(d > 0 for d in self.diffs),
            "equal": sum(d == 0 for d in self.diffs),
            "b_better": sum(d < 0 for d in self.diffs),
            "mean_diff": mean_ci(self.diffs).to_json(),
            "excluded_deals": self.excluded_deals,
        }


@dataclass(slots=True)
class Standings:
    entrants: list[EntrantStanding]  # ranked
    head_to_head: dict[str, dict[str, Record]]
    paired: list[PairedComparison]
    games_played: int
    games_total: int
    sandbox: dict[str, int] = field(default_factory=dict)  # games per mode: {"bwrap": n, "off": m}
    network: tuple[str, ...] = ()  # entrants allowed the network (not isolated from it)
    # Entrants' own limits and sandbox (config.Tournament.overrides), set by standings_files.
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def isolated(self) -> bool:
        """Every game ran with its bots sandboxed and without the network."""
        return not self.network and set(self.sandbox) <= {"bwrap"}

    def to_json(self) -> dict[str, Any]:
        names = [e.name for e in self.entrants]
        return {
            "games_played": self.games_played,
            "games_total": self.games_total,
            "complete": self.games_played == self.games_total,
            "rating_model": RATING_MODEL,
            "sandbox": {"games": dict(self.sandbox), "network": list(self.network), "isolated": self.isolated},
            "entrants": [e.to_json() for e in self.entrants],
            "head_to_head": {
                a: {b: self.head_to_head[a][b].to_json() for b in names if b != a} for a in names
            },
            "paired": [p.to_json() for p in self.paired],
            **({"overrides": self.overrides} if self.overrides else {}),
        }


def compute_standings(
    names: Sequence[str],
    num_teams: int,
    results: Iterable[GameResult],
    *,
    games_total: int | None = None,
    network: Sequence[str] = (),
) -> Standings:
    ordered = sorted(results, key=lambda r: r.game_id)
    rows = {name: EntrantStanding(name) for name in names}
    h2h = {a: {b: Record() for b in names if b != a} for a in names}
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in names}

    for r in ordered:
        points = [team_points(r, t) for t in range(len(r.teams))]
        for team, name in enumerate(r.teams):
            row = rows[name]
            row.record.add(points[team])
            if r.status == "aborted":
                row.aborted += 1
            if r.fault is not None:
                if r.fault.team == team:
                    row.forfeits[r.fault.reason] += 1
                else:
                    row.opponent_forfeits += 1
        if r.status != "forfeit":
            for name, diff in zip(r.teams, score_differences(r), strict=False):
                rows[name].score_diffs.append(diff)
        ranks = placing(r)
        for ta, a in enumerate(r.teams):
            for tb, b in enumerate(r.teams):
                if ta != tb:
                    h2h[a][b].add(1.0 if ranks[ta] < ranks[tb] else 0.0 if ranks[ta] > ranks[tb] else 0.5)
        # Ratings: one openskill "team" of one player per game team.
        # list[float](ranks): the same ints, typed as openskill's rate() asks.
        updated = model.rate([[ratings[name]] for name in r.teams], ranks=list[float](ranks))
        for name, new in zip(r.teams, updated, strict=False):
            ratings[name] = new[0]

    for name, row in rows.items():
        row.mu, row.sigma = ratings[name].mu, ratings[name].sigma
    ranked = sorted(rows.values(), key=lambda e: (-round(e.ordinal, 9), -e.record.wins, names.index(e.name)))
    for i, row in enumerate(ranked, 1):
        row.rank = i

    return Standings(
        entrants=ranked,
        head_to_head=h2h,
        paired=paired_comparisons(names, num_teams, ordered),
        games_played=len(ordered),
        games_total=len(ordered) if games_total is None else games_total,
        sandbox=dict(Counter(r.sandbox for r in ordered)),
        network=tuple(network),
    )


def paired_comparisons(names: Sequence[str], num_teams: int, results: Sequence[GameResult]) -> list[PairedComparison]:
    arrangements_per_deal = math.factorial(num_teams)
    deals: dict[tuple[tuple[str, ...], int], list[GameResult]] = defaultdict(list)
    for r in results:
        deals[r.deal_key].append(r)
    order = {name: i for i, name in enumerate(names)}
    pairs: dict[tuple[str, str], PairedComparison] = {}
    for (pairing, _deal), games in sorted(deals.items(), key=lambda kv: min(g.game_id for g in kv[1])):
        if len({g.arrangement for g in games}) < arrangements_per_deal:
            continue  # not every seating has been played yet
        members = sorted(pairing, key=order.__getitem__)
        forfeited = any(g.status == "forfeit" for g in games)
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                comp = pairs.setdefault((a, b), PairedComparison(a, b))
                if forfeited:
                    comp.excluded_deals += 1
                    continue
                diffs = [float(g.scores[g.teams.index(a)]) - float(g.scores[g.teams.index(b)]) for g in games]
                comp.diffs.append(math.fsum(diffs) / len(diffs))
    return [pairs[key] for key in sorted(pairs, key=lambda k: (order[k[0]], order[k[1]]))]
