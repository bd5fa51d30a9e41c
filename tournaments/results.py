"""One finished game as a line of ``results.jsonl``, and reading that file back.

The line holds what standings need (who sat where, how the game ended, who
faulted and why) and a pointer to the full record; standings read nothing
else.  ``duration_s`` is kept for the curious but no statistic uses it, so
standings never depend on timing.

A line is written only after its game has ended, with one ``write`` followed
by ``fsync``; after a crash the file is a prefix of complete lines, possibly
followed by one torn line.  ``parse_results`` keeps the complete lines and
says where the good prefix ends, so the runner can cut the torn tail before
appending.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from referee.games import team_of_seat
from referee.match.types import MatchResult

from .schedule import ScheduledGame

RESULT_VERSION = 1


@dataclass(frozen=True, slots=True)
class GameFault:
    seat: int
    team: int
    entrant: str
    reason: str  # a FaultReason value
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "team": self.team, "entrant": self.entrant,
                "reason": self.reason, "message": self.message}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GameFault":
        return cls(int(data["seat"]), int(data["team"]), str(data["entrant"]),
                   str(data["reason"]), str(data.get("message", "")))


@dataclass(frozen=True, slots=True)
class GameResult:
    game_id: int
    pairing: tuple[str, ...]
    deal: int
    arrangement: int
    teams: tuple[str, ...]  # entrant of each team
    seed: int
    status: str  # win | draw | aborted | forfeit
    winners: tuple[int, ...]  # team numbers
    scores: tuple[float, ...]  # per team
    reason: str = ""
    fault: GameFault | None = None
    decisions: int = 0
    duration_s: float = 0.0
    record: str | None = None  # path relative to the output directory

    @property
    def deal_key(self) -> tuple[tuple[str, ...], int]:
        return (self.pairing, self.deal)

    @classmethod
    def from_match(cls, game: ScheduledGame, result: MatchResult, record: str | None) -> "GameResult":
        fault = None
        if result.fault is not None:
            team = team_of_seat(result.fault.seat, len(game.teams))
            fault = GameFault(result.fault.seat, team, game.teams[team],
                              result.fault.reason.value, result.fault.message)
        outcome = result.outcome
        return cls(
            game_id=game.id, pairing=game.pairing, deal=game.deal, arrangement=game.arrangement,
            teams=game.teams, seed=game.seed, status=outcome.status,
            winners=tuple(outcome.winners), scores=tuple(outcome.scores), reason=outcome.reason,
            fault=fault, decisions=result.decisions, duration_s=round(result.duration_s, 3),
            record=record,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "v": RESULT_VERSION,
            "game_id": self.game_id,
            "pairing": list(self.pairing),
            "deal": self.deal,
            "arrangement": self.arrangement,
            "teams": list(self.teams),
            "seed": self.seed,
            "status": self.status,
            "winners": list(self.winners),
            "scores": list(self.scores),
            "reason": self.reason,
            "fault": self.fault.to_json() if self.fault else None,
            "decisions": self.decisions,
            "duration_s": self.duration_s,
            "record": self.record,
        }

    def to_line(self) -> bytes:
        return (json.dumps(self.to_json(), separators=(",", ":")) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GameResult":
        return cls(
            game_id=int(data["game_id"]),
            pairing=tuple(data["pairing"]),
            deal=int(data["deal"]),
            arrangement=int(data["arrangement"]),
            teams=tuple(data["teams"]),
            seed=int(data["seed"]),
            status=str(data["status"]),
            winners=tuple(int(t) for t in data["winners"]),
            scores=tuple(data["scores"]),
            reason=str(data.get("reason", "")),
            fault=GameFault.from_json(data["fault"]) if data.get("fault") else None,
            decisions=int(data.get("decisions", 0)),
            duration_s=float(data.get("duration_s", 0.0)),
            record=data.get("record"),
        )

    def matches(self, game: ScheduledGame) -> bool:
        """Does this line belong to ``game`` of the current schedule?"""
        return (self.game_id, self.pairing, self.deal, self.arrangement, self.teams, self.seed) == (
            game.id, game.pairing, game.deal, game.arrangement, game.teams, game.seed)


@dataclass(frozen=True, slots=True)
class ParsedResults:
    results: dict[int, GameResult]  # by game id; first line wins on duplicates
    good_bytes: int  # length of the prefix made of complete, valid lines
    dropped: int  # lines after that prefix (a torn tail), to be cut


def parse_results(data: bytes) -> ParsedResults:
    """Read ``results.jsonl``.  Lines are valid up to the first line that is
    unterminated or unreadable; that line and everything after it is dropped
    (only a crash during a write can produce one, and it can only be last)."""
    results: dict[int, GameResult] = {}
    pos = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        try:
            result = GameResult.from_json(json.loads(data[pos:nl]))
        except (ValueError, KeyError, TypeError):
            break
        results.setdefault(result.game_id, result)
        pos = nl + 1
    tail = data[pos:]
    dropped = tail.count(b"\n") + (0 if tail.endswith(b"\n") or not tail else 1)
    return ParsedResults(results, pos, dropped)
