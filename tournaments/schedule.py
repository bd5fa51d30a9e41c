"""The games of a tournament as a list: pure, deterministic, no I/O.

Vocabulary
----------
* An **entrant** is one bot program.  In a game it fills every seat of one
  team (team of seat: ``referee.games.team_of_seat``), each seat its own process.
* A **pairing** is a set of ``num_teams`` distinct entrants (a pair for the
  two-team games, a triple for Schmier), in the entrants' order.  A round
  robin plays every pairing; a **gauntlet** only the pairings holding at
  least one of its **challengers** (so challengers meet every other entrant,
  challengers included, and no game is among non-challengers only; in
  Schmier, a triple is played if a challenger is in it).
* A **deal** is one deal seed of a pairing; ``rounds * games_per_pairing``
  deals are played per pairing.
* An **arrangement** assigns the pairing's entrants to the teams: every
  permutation is played on each deal (2 for two teams, 6 for three), so the
  rivals hold the same cards — duplicate deals.

So a pairing plays ``deals * num_teams!`` games.

A **shape** (``Shape``) is what a run plays: the entrants, the deals per
pairing and the challengers.  A run can grow (more deals, more entrants, a
gauntlet opened up to more challengers or to a round robin): its history is
the list of its shapes, each containing the one before.  Game ids are
positions in ``plan(history)``: the games of the first shape ordered
deal-major (deal 0 of every pairing, then deal 1, ...) so that a tournament
stopped half way has played every pairing about equally, then the games each
later shape adds, in the same order.  So a game keeps its id (and its seed)
when the run grows, and new games get new ids.  None of this depends on any
seed, so the schedule is public.

Deal seeds are secret: HMAC-SHA256 keyed with the **tournament secret** (random
bytes kept in the output directory, never in the tournament file or
``tournament.json``) over the tournament seed, the pairing's names (sorted)
and the deal index.  Knowing the tournament file is therefore not knowing the
cards; the same secret (the same output directory, or one given explicitly)
gives the same deals.  They are independent of scheduling, of ``jobs`` and of
the order the entrants are listed in, and equal for all arrangements of one
deal.  A **deals file** (``deal_seeds``) replaces them: deal ``d`` of every
pairing is then the file's seed ``d``, whatever the secret, so two
tournaments play the same deals; those seeds are as secret as the file.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games import team_of_seat

SEED_BITS = 63  # seeds stay positive and fit a signed 64-bit integer in any bot's JSON parser
SECRET_BYTES = 32  # length of a tournament secret
DEAL_TAG = "referee-deal-v2"  # v1 hashed the tournament seed alone, without a secret


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    id: int
    pairing: tuple[str, ...]  # entrant names in configured order
    deal: int  # deal index within the pairing, 0-based
    arrangement: int  # index into arrangements(pairing)
    teams: tuple[str, ...]  # entrant of team t at index t
    seed: int  # the deal seed, shared by every arrangement of this deal

    def seat_entrants(self, num_seats: int) -> tuple[str, ...]:
        """Entrant name of every seat, seat order."""
        return tuple(self.teams[team_of_seat(seat, len(self.teams))] for seat in range(num_seats))

    @property
    def deal_key(self) -> tuple[tuple[str, ...], int]:
        return (self.pairing, self.deal)


def _join(parts: tuple[object, ...]) -> bytes:
    return "\x1f".join(str(p) for p in parts).encode("utf-8")


def _seed_bits(digest: bytes) -> int:
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def stable_hash(*parts: object) -> int:
    """A SEED_BITS-bit integer from SHA-256 of the parts (stable across runs and machines)."""
    return _seed_bits(hashlib.sha256(_join(parts)).digest())


def keyed_hash(key: bytes, *parts: object) -> int:
    """A SEED_BITS-bit integer from HMAC-SHA256 of the parts under ``key``:
    unpredictable without the key, stable with it."""
    return _seed_bits(hmac.new(key, _join(parts), hashlib.sha256).digest())


def deal_seed(tournament_seed: int, secret: bytes, pairing: Sequence[str], deal: int) -> int:
    """The seed of one deal of a pairing: needs the tournament secret."""
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"a tournament secret has {SECRET_BYTES} bytes, got {len(secret)}")
    return keyed_hash(secret, DEAL_TAG, tournament_seed, *sorted(pairing), deal)


def deal_set(game: str, count: int, seed: int) -> list[int]:
    """``count`` deal seeds for a deals file (``referee deals``): public, a
    function of the game's name, ``seed`` and the position only."""
    return [stable_hash("referee-deals-v1", game, seed, i) for i in range(count)]


def bot_seed(game_seed: int, seat: int, entrant: str) -> int:
    """Seed offered to a bot through the ``{seed}`` placeholder.

    It depends on the deal, the seat and the entrant's name: a game replays
    identically (what resuming relies on), and two entrants running the same
    program are still two different players.
    """
    return stable_hash("referee-bot-v1", game_seed, seat, entrant)


@dataclass(frozen=True, slots=True)
class Shape:
    """What one run plays: ``deals`` deal seeds of every pairing of ``names``
    (those with a challenger in them when ``challengers`` is not empty)."""

    names: tuple[str, ...]
    deals: int
    challengers: tuple[str, ...] = ()

    def pairings(self, num_teams: int) -> list[tuple[str, ...]]:
        return pairings(self.names, num_teams, self.challengers)

    def to_json(self) -> dict[str, Any]:
        return {"names": list(self.names), "deals": self.deals, "challengers": list(self.challengers)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Shape:
        return cls(tuple(data["names"]), int(data["deals"]), tuple(data.get("challengers", ())))


def pairings(names: Sequence[str], num_teams: int, challengers: Sequence[str] = ()) -> list[tuple[str, ...]]:
    """Every pairing of a round robin, or of a gauntlet of ``challengers``."""
    every = itertools.combinations(names, num_teams)
    if not challengers:
        return list(every)
    wanted = set(challengers)
    return [p for p in every if wanted.intersection(p)]


def arrangements(pairing: Sequence[str]) -> list[tuple[str, ...]]:
    return list(itertools.permutations(pairing))


@dataclass(frozen=True, slots=True)
class PlannedGame:
    """A game without its seed: what ``plan`` knows without the secret."""

    id: int
    pairing: tuple[str, ...]
    deal: int
    arrangement: int
    teams: tuple[str, ...]


def growth_problems(old: Shape, new: Shape, num_teams: int) -> list[str]:
    """Why ``new`` does not contain every game of ``old`` (empty: it does)."""
    problems = [f"entrant {n!r} removed" for n in old.names if n not in new.names]
    if new.deals < old.deals:
        problems.append(f"deals per pairing (rounds x games_per_pairing) was {old.deals}, now {new.deals}")
    if not problems:
        kept = {frozenset(p) for p in new.pairings(num_teams)}
        lost = [p for p in old.pairings(num_teams) if frozenset(p) not in kept]
        if lost:
            problems.append(f"challengers were {', '.join(old.challengers) or 'none (a round robin)'}, now "
                            f"{', '.join(new.challengers) or 'none'}: pairing {'-'.join(lost[0])} would no longer "
                            f"be played")
    return problems


def plan(history: Sequence[Shape], num_teams: int) -> list[PlannedGame]:
    """Every game of a run that grew through ``history`` (each shape contains
    the one before), in id order: each shape adds its new games, deal-major."""
    if not history:
        raise ValueError("a schedule needs at least one shape")
    games: list[PlannedGame] = []
    seen: set[tuple[int, tuple[str, ...]]] = set()
    for shape in history:
        if len(set(shape.names)) != len(shape.names):
            raise ValueError("entrant names must be distinct")
        if num_teams < 1 or len(shape.names) < num_teams:
            raise ValueError(f"{num_teams} teams need at least {num_teams} entrants, got {len(shape.names)}")
        all_pairings = shape.pairings(num_teams)
        for deal in range(shape.deals):
            for pairing in all_pairings:
                for arrangement, teams in enumerate(arrangements(pairing)):
                    if (deal, teams) not in seen:
                        seen.add((deal, teams))
                        games.append(PlannedGame(len(games), pairing, deal, arrangement, teams))
    return games


def schedule(
    history: Sequence[Shape], num_teams: int, tournament_seed: int, secret: bytes,
    deal_seeds: Sequence[int] | None = None,
) -> list[ScheduledGame]:
    """``plan(history)`` with each game's deal seed: from ``deal_seeds`` (a
    deals file) when given, else from ``tournament_seed`` and ``secret``."""
    games = plan(history, num_teams)
    if deal_seeds is not None and games and (need := 1 + max(g.deal for g in games)) > len(deal_seeds):
        raise ValueError(f"{need} deals per pairing need {need} deal seeds, got {len(deal_seeds)}")
    seeds: dict[tuple[tuple[str, ...], int], int] = {}

    def seed_of(pairing: tuple[str, ...], deal: int) -> int:
        if deal_seeds is not None:
            return deal_seeds[deal]
        key = (tuple(sorted(pairing)), deal)
        if key not in seeds:
            seeds[key] = deal_seed(tournament_seed, secret, pairing, deal)
        return seeds[key]

    return [ScheduledGame(g.id, g.pairing, g.deal, g.arrangement, g.teams, seed_of(g.pairing, g.deal))
            for g in games]
