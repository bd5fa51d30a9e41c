"""The round robin as a list of games: pure, deterministic, no I/O.

Vocabulary
----------
* An **entrant** is one bot program.  In a game it fills every seat of one
  team (team of seat: ``referee.games.team_of_seat``), each seat its own process.
* A **pairing** is a set of ``num_teams`` distinct entrants (a pair for the
  two-team games, a triple for Schmier), in the entrants' configured order.
* A **deal** is one deal seed of a pairing; ``games_per_pairing`` deals are
  played per pairing.
* An **arrangement** assigns the pairing's entrants to the teams: every
  permutation is played on each deal (2 for two teams, 6 for three), so the
  rivals hold the same cards — duplicate deals.

So a pairing plays ``games_per_pairing * num_teams!`` games.

Game ids are positions in ``schedule()``'s list, ordered deal-major (deal 0 of
every pairing, then deal 1, ...) so that a tournament stopped half way has
played every pairing about equally.  None of this depends on any seed, so the
schedule is public.

Deal seeds are secret: HMAC-SHA256 keyed with the **tournament secret** (random
bytes kept in the output directory, never in the tournament file or
``tournament.json``) over the tournament seed, the pairing's names (sorted)
and the deal index.  Knowing the tournament file is therefore not knowing the
cards; the same secret (the same output directory, or one given explicitly)
gives the same deals.  They are independent of scheduling, of ``jobs`` and of
the order the entrants are listed in, and equal for all arrangements of one
deal.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

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


def bot_seed(game_seed: int, seat: int, entrant: str) -> int:
    """Seed offered to a bot through the ``{seed}`` placeholder.

    It depends on the deal, the seat and the entrant's name: a game replays
    identically (what resuming relies on), and two entrants running the same
    program are still two different players.
    """
    return stable_hash("referee-bot-v1", game_seed, seat, entrant)


def pairings(names: Sequence[str], num_teams: int) -> list[tuple[str, ...]]:
    return list(itertools.combinations(names, num_teams))


def arrangements(pairing: Sequence[str]) -> list[tuple[str, ...]]:
    return list(itertools.permutations(pairing))


def total_games(num_entrants: int, num_teams: int, games_per_pairing: int) -> int:
    return math.comb(num_entrants, num_teams) * math.factorial(num_teams) * games_per_pairing


def schedule(
    names: Sequence[str], num_teams: int, games_per_pairing: int, tournament_seed: int, secret: bytes
) -> list[ScheduledGame]:
    """Every game of the round robin, in id order; only the seeds depend on
    ``tournament_seed`` and ``secret``."""
    if len(set(names)) != len(names):
        raise ValueError("entrant names must be distinct")
    if num_teams < 1 or len(names) < num_teams:
        raise ValueError(f"{num_teams} teams need at least {num_teams} entrants, got {len(names)}")
    games: list[ScheduledGame] = []
    all_pairings = pairings(names, num_teams)
    for deal in range(games_per_pairing):
        for pairing in all_pairings:
            seed = deal_seed(tournament_seed, secret, pairing, deal)
            for arrangement, teams in enumerate(arrangements(pairing)):
                games.append(ScheduledGame(len(games), pairing, deal, arrangement, teams, seed))
    return games
