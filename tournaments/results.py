"""One finished game as a line of ``results.jsonl``, and reading that file back.

The line holds what standings need (who sat where, how the game ended, who
faulted and why), a pointer to the full record and the SHA-256 of that record
file; standings read nothing else.  ``duration_s`` is kept for the curious but
no statistic uses it, so standings never depend on timing.

Every line carries an authenticator, ``mac``: HMAC-SHA256 under the
tournament secret (see ``schedule``) of the line's canonical content, which is
every field but ``mac`` as JSON with sorted keys, no spaces and ASCII escapes
(``result_mac``).  Without the secret a line cannot be forged or altered: a
bot that appends "win" lines, or edits a score, writes lines that fail their
MAC.

Deleting a line is detected through ``seq``, a field of the authenticated
content (lines of version 3 on): the line's place in the file's sequence of
authentic lines, 1, 2, 3, ... as the writer appended them.  ``check_sequence``
finds the numbers missing below the highest one present (a line set aside by a
resume, in ``results.rejected.jsonl``, counts as present: it was moved, not
lost).  A deleted *last* line leaves no gap: it is found only when the cached
``standings.json`` still counts its game (``referee report``).  Lines of
version 2 (no ``seq``) are read as before and fill the lowest numbers, so an
older folder stays readable and resumable; a deletion among them is seen only
as a count.

A line is written only after its game has ended, with one ``write`` followed
by ``fsync``; after a crash the file is complete lines, possibly followed by
one torn line without its newline.  ``parse_results`` judges each complete
line on its own, so a bad line anywhere costs only itself, and says where the
complete lines end, so the runner can cut the torn tail before appending.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import UserFault
from referee.games import team_of_seat
from referee.inputs import MAX_DEPTH, depth, read_input
from referee.match.types import MatchResult, fault_line

from .schedule import ScheduledGame

RESULT_VERSION = 3  # 2: lines carry record_sha256 and mac; 3: and seq
MAC_TAG = b"referee-result-v2\x1f"  # keeps result MACs apart from deal seeds, keyed by the same secret


def result_mac(secret: bytes, content: Mapping[str, Any]) -> str:
    """The authenticator of a result line whose fields but ``mac`` are ``content``."""
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(secret, MAC_TAG + canonical.encode("ascii"), hashlib.sha256).hexdigest()


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _positive_or_none(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"seq {value!r} is not a positive integer")
    return value


@dataclass(frozen=True, slots=True)
class GameFault:
    seat: int
    team: int
    entrant: str
    reason: str  # a FaultReason value
    message: str
    # Where it happened: the refused request's id, and the deal (card games) or turn (Pegs and
    # Jokers). Absent from lines written before they existed, and from faults with no request.
    request: int | None = None
    deal: int | None = None
    turn: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "team": self.team, "entrant": self.entrant,
                               "reason": self.reason, "message": self.message}
        for key in ("request", "deal", "turn"):  # only when known: older lines stay as they were
            if (value := getattr(self, key)) is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameFault:
        return cls(int(data["seat"]), int(data["team"]), str(data["entrant"]),
                   str(data["reason"]), str(data.get("message", "")), _int_or_none(data.get("request")),
                   _int_or_none(data.get("deal")), _int_or_none(data.get("turn")))


def game_fault_line(result: GameResult, game: str, output: Path) -> str | None:
    """The fault line of a tournament game (``types.fault_line``), its record under ``output``."""
    f = result.fault
    if f is None:
        return None
    return fault_line(game=game, game_id=result.game_id, seat=f.seat, who=f.entrant, reason=f.reason,
                      message=f.message, record=output / result.record if result.record else None,
                      request=f.request, deal=f.deal, turn=f.turn)


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
    record_sha256: str | None = None  # hex SHA-256 of the record file, set when the line is written
    sandbox: str = "off"  # how its bots ran: "bwrap" (isolated) or "off"
    # Per team: its replies' (decisions, total ms, longest ms); like duration_s, a
    # measurement no standings.json figure uses. Absent from older lines.
    times: tuple[tuple[int, float, float], ...] | None = None
    seq: int | None = None  # the line's number among the file's authentic lines (module docstring)

    @property
    def deal_key(self) -> tuple[tuple[str, ...], int]:
        return (self.pairing, self.deal)

    @classmethod
    def from_match(cls, game: ScheduledGame, result: MatchResult, record: str | None) -> GameResult:
        fault = None
        if result.fault is not None:
            team = team_of_seat(result.fault.seat, len(game.teams))
            f = result.fault
            fault = GameFault(f.seat, team, game.teams[team], f.reason.value, f.message,
                              f.request, f.deal, f.turn)
        outcome = result.outcome
        times = None
        if result.decision_ms:
            per_team = [[0, 0.0, 0.0] for _ in game.teams]
            for seat, (count, total, longest) in enumerate(result.decision_ms):
                t = per_team[team_of_seat(seat, len(game.teams))]
                t[0] += count
                t[1] += total
                t[2] = max(t[2], longest)
            times = tuple((int(c), round(t, 3), m) for c, t, m in per_team)
        return cls(
            game_id=game.id, pairing=game.pairing, deal=game.deal, arrangement=game.arrangement,
            teams=game.teams, seed=game.seed, status=outcome.status,
            winners=tuple(outcome.winners), scores=tuple(outcome.scores), reason=outcome.reason,
            fault=fault, decisions=result.decisions, duration_s=round(result.duration_s, 3),
            record=record, sandbox=result.sandbox, times=times,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            # a line read from a version-2 file (no seq) is written back as it was
            "v": RESULT_VERSION if self.seq is not None else 2,
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
            "record_sha256": self.record_sha256,
            "sandbox": self.sandbox,
            **({"times": [list(t) for t in self.times]} if self.times is not None else {}),
            **({"seq": self.seq} if self.seq is not None else {}),
        }

    def to_line(self, secret: bytes, seq: int | None = None) -> bytes:
        """The ``results.jsonl`` line, authenticated under ``secret`` (with ``seq``, that number)."""
        content = (dataclasses.replace(self, seq=seq) if seq is not None else self).to_json()
        line = {**content, "mac": result_mac(secret, content)}
        return (json.dumps(line, separators=(",", ":")) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameResult:
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
            record_sha256=data.get("record_sha256"),
            sandbox=str(data.get("sandbox", "off")),
            times=tuple((int(c), float(t), float(m)) for c, t, m in data["times"]) if data.get("times") else None,
            seq=_positive_or_none(data.get("seq")),
        )

    def matches(self, game: ScheduledGame) -> bool:
        """Does this line belong to ``game`` of the current schedule?"""
        return (self.game_id, self.pairing, self.deal, self.arrangement, self.teams, self.seed) == (
            game.id, game.pairing, game.deal, game.arrangement, game.teams, game.seed)


@dataclass(frozen=True, slots=True)
class ResultLine:
    """One complete line of ``results.jsonl``: a result, or the reason it was rejected."""

    number: int  # 1-based line number in the file
    raw: bytes  # the line as read, with its newline
    result: GameResult | None = None  # None when rejected
    problem: str | None = None  # why the line was rejected
    claimed_game: int | None = None  # the game id the line names, when it names one
    claimed_seq: int | None = None  # the seq the line names, when it names one (authentic or not)


@dataclass(frozen=True, slots=True)
class ParsedResults:
    lines: tuple[ResultLine, ...]  # every complete line, in file order
    good_bytes: int  # length of the complete lines: where a torn tail starts
    dropped: int  # a torn last line (no newline): 0 or 1, to be cut

    @property
    def results(self) -> dict[int, GameResult]:
        """The accepted results by game id; the first line wins on duplicates."""
        out: dict[int, GameResult] = {}
        for line in self.lines:
            if line.result is not None:
                out.setdefault(line.result.game_id, line.result)
        return out

    @property
    def rejected(self) -> list[ResultLine]:
        return [line for line in self.lines if line.result is None]


def parse_results(data: bytes, *, secret: bytes | None = None) -> ParsedResults:
    """Read ``results.jsonl``, judging every complete line on its own.

    A line is rejected when it is not JSON, not a result line, or, given
    ``secret``, when its ``mac`` is missing or wrong; the lines around it are
    unaffected.  A last line without its newline is a write torn by a crash:
    it is counted in ``dropped``, never judged.  Without ``secret`` lines are
    read but not authenticated (for tools and tests; resuming always
    authenticates)."""
    lines: list[ResultLine] = []
    pos = 0
    while (nl := data.find(b"\n", pos)) >= 0:
        lines.append(_judge(len(lines) + 1, data[pos:nl + 1], secret))
        pos = nl + 1
    return ParsedResults(tuple(lines), pos, 1 if pos < len(data) else 0)


def read_results(path: Path, *, secret: bytes | None = None) -> ParsedResults:
    """``parse_results`` of the file ``path``: a regular file within the cap of a results file
    (``referee.inputs``), else ``ResultsFileError`` in one line."""
    return parse_results(read_input(path, "results file", ResultsFileError), secret=secret)


class ResultsFileError(UserFault):
    """A results file that cannot be read at all (not a regular file, over its cap)."""


def _judge(number: int, raw: bytes, secret: bytes | None) -> ResultLine:
    try:
        data = json.loads(raw)
    except RecursionError:
        return ResultLine(number, raw, problem=f"not a result line (nested more than {MAX_DEPTH} deep)")
    except ValueError:  # UnicodeDecodeError included
        return ResultLine(number, raw, problem="not JSON")
    if depth(data) > MAX_DEPTH:
        return ResultLine(number, raw, problem=f"not a result line (nested more than {MAX_DEPTH} deep)")
    if not isinstance(data, dict):
        return ResultLine(number, raw, problem="not a JSON object")
    claimed = data.get("game_id")
    claimed = claimed if isinstance(claimed, int) and not isinstance(claimed, bool) else None
    seq = data.get("seq")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
    mac = data.pop("mac", None)
    if secret is not None:
        if not isinstance(mac, str):
            return ResultLine(number, raw, problem="no authenticator (mac)", claimed_game=claimed, claimed_seq=seq)
        if not hmac.compare_digest(mac.encode("utf-8", "replace"), result_mac(secret, data).encode("ascii")):
            return ResultLine(number, raw, problem="authenticator does not match (forged or altered, "
                              "or written with another secret)", claimed_game=claimed, claimed_seq=seq)
    try:
        result = GameResult.from_json(data)
    except (ValueError, KeyError, TypeError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        return ResultLine(number, raw, problem=f"not a result line ({what})", claimed_game=claimed, claimed_seq=seq)
    return ResultLine(number, raw, result=result, claimed_game=result.game_id, claimed_seq=result.seq)


@dataclass(frozen=True, slots=True)
class SequenceCheck:
    """What the authentic lines' ``seq`` numbers say (``check_sequence``)."""

    missing: tuple[int, ...]  # numbers below the highest that no authentic line has: deleted lines
    next_seq: int  # the number of the next line to append
    unnumbered: int  # authentic lines without seq (version 2), counted as the lowest numbers
    lost: int  # deleted lines among ``missing`` (those beyond what unnumbered lines account for)

    @property
    def ok(self) -> bool:
        return self.lost == 0

    def describe(self) -> str:
        """One line for the user: how many authentic lines are missing, and which numbers."""
        shown = ", ".join(map(str, self.missing[:10])) + (" …" if len(self.missing) > 10 else "")
        which = f" (sequence numbers {shown} missing)" if self.missing and not self.unnumbered else ""
        return f"{self.lost} authentic line{'s' if self.lost != 1 else ''} deleted{which}"


def check_sequence(results: Iterable[GameResult], rejected: Iterable[int] = ()) -> SequenceCheck:
    """Judge the ``seq`` numbers of authentic ``results`` (the lines of ``results.jsonl`` whose MAC
    checks, plus those a resume set aside): which numbers are missing, and the next one.  The
    numbers ``rejected`` lines claim count as present: such a line is reported as rejected
    (altered, forged, unreadable), so it is not also called deleted."""
    seen: list[int] = []
    unnumbered = 0
    for r in results:
        if r.seq is None:
            unnumbered += 1
        else:
            seen.append(r.seq)
    authentic = set(seen)
    top = max(authentic, default=0)  # only authentic numbers bound the range (a forged one could be huge)
    present = authentic | {s for s in rejected if 1 <= s <= top}
    missing = tuple(s for s in range(1, top + 1) if s not in present)
    lost = max(0, len(missing) - unnumbered)
    return SequenceCheck(missing, max(top, len(authentic) + unnumbered) + 1, unnumbered, lost)
