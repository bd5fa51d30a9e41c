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

A **duplicate unit** is one deal of a pairing once every seating of it has
been played (2 games for two teams, 6 for Schmier); games of a deal still
missing a seating count in W-D-L and ratings but in no unit statistic.

* points: per game, the entrant's placing against each other team (ahead
  1, level ½, behind 0) averaged over them (two teams: win 1, draw ½, loss
  0); its **score**, points per game, orders the table;
* win rate: wins / games, with a 95 % Wilson interval;
* Elo ± and LOS (``tournaments.elo``): from the unit scores, per pairing
  and per entrant (its units against every opponent); a unit with a forfeit
  counts, the forfeit being a loss;
* score difference: per unit without a forfeit (a forfeit stops the scores
  mid-game), the mean over its games of the team's score minus the mean of
  the other teams' scores; a 95 % Student-t interval over the units (the
  unit, not the game, is the independent draw: its games share the cards);
* rating: openskill's Plackett–Luce model (one "player" per team, since an
  entrant fills a whole team) fed the placing as ranks;
  ``ordinal = mu - 3 sigma`` orders entrants of equal score;
* ranks and ties: going down the table, an entrant shares the rank of the
  group above it (printed ``=1``) unless the results tell it apart from a
  member of that group.  Two entrants are told apart when their scores
  differ and either the upper one was placed ahead of the lower one in every
  game they both played (a dominance: a bot that lost every game never
  shares a rank with the bots that beat it), or their duplicate Elo interval
  against each other excludes 0 (never met on a complete deal: their Elo
  intervals against the field are apart).  Equal scores always tie;
* head to head: for each pair of entrants, the games they both played, won
  by the one placed ahead of the other;
* paired (duplicate) comparison: for each pair in a pairing, per unit, A's
  unit score (the pentanomial for two teams) and, over units without a
  forfeit, the mean over the unit's games of (A's team score - B's);
* seat and position effects: per unit, the share of wins and the score
  difference of team t (and of the first dealer's team, and of the team of
  the first to act, left of the dealer), averaged over the unit's games: each
  entrant sat in each place equally often on the same cards, so skill
  cancels and what is left is the place's own advantage; over the units,
  a Wilson interval for the share (a mean of values in [0, 1]: always
  inside 0–100 % and of some width) and a t-interval for the score
  difference;
* how games ended: games by outcome reason (``all_deals_played``,
  ``max_deals`` …), aborted ones as ``aborted: REASON``, forfeits as
  ``forfeit: FAULT``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from referee.games import team_of_seat

from .elo import EloEstimate, estimate, unit_distribution
from .results import GameResult
from .stats import Interval, mean_ci, wilson

RATING_MODEL = "openskill PlackettLuce (mu 25, sigma 25/3); ordinal = mu - 3*sigma"
FirstDealer = Callable[[GameResult], int]  # the first dealer's seat of a game (from its deal seed)


def team_points(result: GameResult, team: int) -> float:
    """1 for a win, 0.5 for a draw, 0 for a loss."""
    if not result.winners:
        return 0.5
    return 1.0 if team in result.winners else 0.0


def win_share(result: GameResult, team: int) -> float:
    """The team's share of the game's win: 1/len(winners) to each winner, 1/k each when nobody won."""
    if not result.winners:
        return 1.0 / len(result.teams)
    return 1.0 / len(result.winners) if team in result.winners else 0.0


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


def versus_points(result: GameResult, a: str, b: str) -> float:
    """A's point against B in one game: placed ahead 1, level 0.5, behind 0."""
    ranks = placing(result)
    ra, rb = ranks[result.teams.index(a)], ranks[result.teams.index(b)]
    return 1.0 if ra < rb else 0.0 if ra > rb else 0.5


def game_points(result: GameResult, name: str) -> float:
    """An entrant's points for one game: its placing against each other team (ahead 1,
    level ½, behind 0), averaged over them.  With two teams: win 1, draw ½, loss 0."""
    others = [b for b in result.teams if b != name]
    return math.fsum(versus_points(result, name, b) for b in others) / len(others) if others else 0.5


def score_differences(result: GameResult) -> list[float]:
    """Per team: own score minus the mean of the other teams' scores."""
    scores = [float(s) for s in result.scores]
    k = len(scores)
    total = math.fsum(scores)
    return [s - (total - s) / (k - 1) for s in scores] if k > 1 else [0.0] * k


def ending(result: GameResult) -> str:
    """How a game ended, as counted in the standings."""
    if result.fault is not None:
        return f"forfeit: {result.fault.reason}"
    if result.status == "aborted":
        return f"aborted: {result.reason or 'guard'}"
    return result.reason or result.status


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


@dataclass(frozen=True, slots=True)
class Unit:
    """A complete duplicate unit: one deal of a pairing in every seating, games by arrangement."""

    pairing: tuple[str, ...]
    deal: int
    games: tuple[GameResult, ...]

    @property
    def forfeited(self) -> bool:
        return any(g.status == "forfeit" for g in self.games)

    def versus(self, a: str, b: str) -> float:
        """A's unit score against B: its points over the unit's games."""
        return math.fsum(versus_points(g, a, b) for g in self.games)

    def score_diff(self, name: str) -> float:
        return math.fsum(score_differences(g)[g.teams.index(name)] for g in self.games) / len(self.games)

    def a_minus_b(self, a: str, b: str) -> float:
        diffs = [float(g.scores[g.teams.index(a)]) - float(g.scores[g.teams.index(b)]) for g in self.games]
        return math.fsum(diffs) / len(diffs)


def complete_units(num_teams: int, ordered: Sequence[GameResult]) -> list[Unit]:
    """Every deal whose seatings have all been played, in the order of their first game."""
    seatings = math.factorial(num_teams)
    deals: dict[tuple[tuple[str, ...], int], list[GameResult]] = defaultdict(list)
    for r in ordered:
        deals[r.deal_key].append(r)
    units = []
    for (pairing, deal), games in sorted(deals.items(), key=lambda kv: min(g.game_id for g in kv[1])):
        by_arrangement = {g.arrangement: g for g in games}
        if len(by_arrangement) == seatings:
            units.append(Unit(pairing, deal, tuple(by_arrangement[i] for i in sorted(by_arrangement))))
    return units


@dataclass(slots=True)
class EntrantStanding:
    name: str
    games_per_unit: int = 2
    record: Record = field(default_factory=Record)
    aborted: int = 0  # among the draws: games stopped by a termination guard
    forfeits: Counter[str] = field(default_factory=Counter)  # own faults, by reason
    opponent_forfeits: int = 0  # games won because another team faulted
    endings: Counter[str] = field(default_factory=Counter)  # its games, by how they ended
    score_diffs: list[float] = field(default_factory=list)  # per unit without a forfeit
    units: list[float] = field(default_factory=list)  # unit scores against each opponent met
    points: float = 0.0  # per game, its placing against each other team, averaged (see ``game_points``)
    mu: float = 0.0
    sigma: float = 0.0
    rank: int = 0
    tied: bool = False  # shares its rank with a neighbour

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma

    @property
    def score(self) -> float | None:
        """Points per game (``game_points``): what the table is ordered by."""
        return round(self.points / self.record.games, 9) if self.record.games else None

    @property
    def win_rate(self) -> Interval:
        return wilson(self.record.wins, self.record.games)

    @property
    def score_diff(self) -> Interval:
        return mean_ci(self.score_diffs)

    @property
    def elo(self) -> EloEstimate:
        return estimate(self.units, self.games_per_unit)

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "rank_label": f"={self.rank}" if self.tied else str(self.rank),
            "tied": self.tied,
            "name": self.name,
            **self.record.to_json(),
            "aborted": self.aborted,
            "forfeits": sum(self.forfeits.values()),
            "forfeits_by_reason": dict(sorted(self.forfeits.items())),
            "opponent_forfeits": self.opponent_forfeits,
            "endings": dict(sorted(self.endings.items())),
            "points": round(self.points, 9),
            "score": self.score,
            "win_rate": self.win_rate.to_json(),
            "score_diff": {**self.score_diff.to_json(), "units": len(self.score_diffs),
                           "games": len(self.score_diffs)},
            "elo": self.elo.to_json(),
            "rating": {"mu": round(self.mu, 6), "sigma": round(self.sigma, 6),
                       "ordinal": round(self.ordinal, 6)},
        }


@dataclass(slots=True)
class PairedComparison:
    """A against B on duplicate deals: ``units`` are A's unit scores, ``diffs``
    A's mean score minus B's per unit without a forfeit."""

    a: str
    b: str
    games_per_unit: int = 2
    units: list[float] = field(default_factory=list)
    diffs: list[float] = field(default_factory=list)
    excluded_deals: int = 0  # complete deals left out of ``diffs`` because of a forfeit

    @property
    def elo(self) -> EloEstimate:
        return estimate(self.units, self.games_per_unit)

    def to_json(self) -> dict[str, Any]:
        dist = unit_distribution(self.units, self.games_per_unit)
        return {
            "a": self.a,
            "b": self.b,
            "units": len(self.units),
            "games_per_unit": self.games_per_unit,
            "distribution": {f"{k:g}": v for k, v in dist.items()},  # A's unit score: count
            "pentanomial": list(dist.values()) if self.games_per_unit == 2 else None,  # LL, LD, DD+WL, WD, WW
            "elo": self.elo.to_json(),
            "deals": len(self.diffs),
            "a_better": sum(d > 0 for d in self.diffs),
            "equal": sum(d == 0 for d in self.diffs),
            "b_better": sum(d < 0 for d in self.diffs),
            "mean_diff": mean_ci(self.diffs).to_json(),
            "excluded_deals": self.excluded_deals,
        }


@dataclass(frozen=True, slots=True)
class PositionEffect:
    """What one place at the table is worth, measured over duplicate units."""

    place: str  # "team 0", "first dealer's team", ...
    fair_share: float  # the win share a place without advantage would have (1 / teams)
    shares: tuple[float, ...]  # per unit
    diffs: tuple[float, ...]  # per unit without a forfeit

    @property
    def win_share(self) -> Interval:
        """The mean share over units, with a 95 % Wilson interval over the units (a unit's
        share lies in [0, 1], so its variance is at most a win/loss's: conservative)."""
        return wilson(math.fsum(self.shares), len(self.shares))

    def to_json(self) -> dict[str, Any]:
        share = self.win_share
        return {"place": self.place, "units": len(self.shares), "fair_share": round(self.fair_share, 9),
                "win_share": share.to_json(),
                "advantage": Interval(*(None if x is None else x - self.fair_share
                                        for x in (share.value, share.lo, share.hi))).to_json(),
                "score_diff": {**mean_ci(self.diffs).to_json(), "units": len(self.diffs)}}


def _fixed(team: int) -> Callable[[GameResult], int]:
    return lambda _game: team


def position_effects(num_teams: int, units: Sequence[Unit], first_dealer: FirstDealer | None) -> list[PositionEffect]:
    places: list[tuple[str, Callable[[GameResult], int]]] = [(f"team {t}", _fixed(t)) for t in range(num_teams)]
    if num_teams == 2:
        places = places[:1]  # team 1 is the mirror image of team 0
    if first_dealer is not None:
        fd = first_dealer
        places.append(("first dealer's team", lambda g: team_of_seat(fd(g), len(g.teams))))
        if num_teams > 2:  # with two teams, the first to act is always on the dealer's opponents' team
            places.append(("first to act's team", lambda g: team_of_seat(fd(g) + 1, len(g.teams))))
    effects = []
    for place, team in places:
        shares = [math.fsum(win_share(g, team(g)) for g in u.games) / len(u.games) for u in units]
        diffs = [math.fsum(score_differences(g)[team(g)] for g in u.games) / len(u.games)
                 for u in units if not u.forfeited]
        effects.append(PositionEffect(place, 1.0 / num_teams, tuple(shares), tuple(diffs)))
    return effects


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
    endings: dict[str, int] = field(default_factory=dict)  # all games, by how they ended
    positions: list[PositionEffect] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # more sections for standings.json (sprt)

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
            "endings": dict(sorted(self.endings.items())),
            "positions": [p.to_json() for p in self.positions],
            **self.extra,
        }


def compute_standings(
    names: Sequence[str],
    num_teams: int,
    results: Iterable[GameResult],
    *,
    games_total: int | None = None,
    network: Sequence[str] = (),
    first_dealer: FirstDealer | None = None,
) -> Standings:
    """``first_dealer`` gives the first dealer's seat of a game (a function of its
    deal seed, see ``standings_files``); without it no dealer effects are measured."""
    ordered = sorted(results, key=lambda r: r.game_id)
    per_unit = math.factorial(num_teams)
    rows = {name: EntrantStanding(name, per_unit) for name in names}
    h2h = {a: {b: Record() for b in names if b != a} for a in names}
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in names}

    for r in ordered:
        points = [team_points(r, t) for t in range(len(r.teams))]
        for team, name in enumerate(r.teams):
            row = rows[name]
            row.record.add(points[team])
            row.points += game_points(r, name)
            row.endings[ending(r)] += 1
            if r.status == "aborted":
                row.aborted += 1
            if r.fault is not None:
                if r.fault.team == team:
                    row.forfeits[r.fault.reason] += 1
                else:
                    row.opponent_forfeits += 1
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

    units = complete_units(num_teams, ordered)
    paired = paired_comparisons(names, num_teams, units)
    for p in paired:
        rows[p.a].units.extend(p.units)
        rows[p.b].units.extend(per_unit - x for x in p.units)
    for u in units:
        if not u.forfeited:
            for name in u.pairing:
                rows[name].score_diffs.append(u.score_diff(name))

    for name, row in rows.items():
        row.mu, row.sigma = ratings[name].mu, ratings[name].sigma
    ranked = sorted(rows.values(), key=lambda e: (-(-1.0 if e.score is None else e.score), -round(e.ordinal, 9),
                                                  -e.record.wins, names.index(e.name)))
    _rank(ranked, {frozenset((p.a, p.b)): p for p in paired}, h2h)

    return Standings(
        entrants=ranked,
        head_to_head=h2h,
        paired=paired,
        games_played=len(ordered),
        games_total=len(ordered) if games_total is None else games_total,
        sandbox=dict(Counter(r.sandbox for r in ordered)),
        network=tuple(network),
        endings=dict(Counter(ending(r) for r in ordered)),
        positions=position_effects(num_teams, units, first_dealer) if units else [],
    )


def _separated(upper: EntrantStanding, lower: EntrantStanding, paired: dict[frozenset[str], PairedComparison],
               h2h: dict[str, dict[str, Record]]) -> bool:
    """Do the results tell ``upper`` (at least as many points per game) from ``lower``?
    See *Ranks and ties* in docs/tournaments.md."""
    if upper.score is None or lower.score is None:
        return upper.score is not None  # an entrant yet to play is below every one that has
    if upper.score == lower.score:
        return False  # the same points per game: nothing to order them by
    met = h2h[upper.name][lower.name]
    if met.games and met.wins == met.games:
        return True  # ahead of it in every game they both played, and more points: a dominance
    if (p := paired.get(frozenset((upper.name, lower.name)))) is not None:
        e = p.elo  # their duplicate Elo interval against each other excludes 0
        return e.bounded and ((e.lo is not None and e.lo > 0) or (e.hi is not None and e.hi < 0))
    eu, el = upper.elo, lower.elo  # never met on a complete deal: their intervals against the field are apart
    if not (eu.bounded and el.bounded) or eu.lo is None or el.hi is None:
        return False
    return eu.lo > el.hi


def _rank(ranked: list[EntrantStanding], paired: dict[frozenset[str], PairedComparison],
          h2h: dict[str, dict[str, Record]]) -> None:
    """Ranks in the table's order.  Entrants with the same score form a block (they always
    share a rank); going down, a block joins the group above it only when the results tell
    none of its members apart from any of that group's (so a tie never joins two entrants
    that are told apart, as a chain of neighbours would); otherwise it starts a new rank."""
    blocks: list[list[EntrantStanding]] = []
    for row in ranked:
        if blocks and blocks[-1][0].score == row.score:
            blocks[-1].append(row)
        else:
            blocks.append([row])
    group: list[EntrantStanding] = []
    position = 1
    for block in blocks:
        if group and not any(_separated(g, row, paired, h2h) for g in group for row in block):
            rank = group[0].rank
            group.extend(block)
        else:
            rank = position
            group = list(block)
        for row in block:
            row.rank = rank
        for row in group:
            row.tied = len(group) > 1
        position += len(block)


def paired_comparisons(names: Sequence[str], num_teams: int, units: Sequence[Unit]) -> list[PairedComparison]:
    order = {name: i for i, name in enumerate(names)}
    per_unit = math.factorial(num_teams)
    pairs: dict[tuple[str, str], PairedComparison] = {}
    for u in units:
        members = sorted(u.pairing, key=order.__getitem__)
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                comp = pairs.setdefault((a, b), PairedComparison(a, b, per_unit))
                comp.units.append(u.versus(a, b))
                if u.forfeited:
                    comp.excluded_deals += 1
                else:
                    comp.diffs.append(u.a_minus_b(a, b))
    return [pairs[key] for key in sorted(pairs, key=lambda k: (order[k[0]], order[k[1]]))]


def decision_times(names: Sequence[str], results: Iterable[GameResult]) -> dict[str, tuple[int, float, float]]:
    """Per entrant: (decisions, mean ms, longest ms) over the games whose lines carry times.

    Kept apart from ``compute_standings`` on purpose: times are measurements, so
    ``standings.json`` (a function of the games' outcomes alone) stays identical
    for the same games however fast the machine was."""
    acc = {n: [0, 0.0, 0.0] for n in names}
    for r in results:
        if r.times is None:
            continue
        for entrant, (count, total, longest) in zip(r.teams, r.times, strict=True):
            a = acc.setdefault(entrant, [0, 0.0, 0.0])
            a[0] += count
            a[1] += total
            a[2] = max(a[2], longest)
    return {n: (int(c), (t / c if c else 0.0), m) for n, (c, t, m) in acc.items() if c}
