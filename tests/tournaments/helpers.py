"""Shared builders for the tournament tests: results by hand, a fake match runner."""

from __future__ import annotations

from pathlib import Path

import trio

from referee.games import Outcome
from referee.match.types import Fault, FaultReason, MatchResult
from tournaments.output import SECRET_FILE
from tournaments.results import GameFault, GameResult, parse_results
from tournaments.schedule import stable_hash

SECRET = bytes(range(32))  # a fixed tournament secret, for runs that must deal the same cards


def result(game_id: int, teams: tuple[str, ...], scores: tuple[int, ...], *, winners=None, status=None,
           deal: int = 0, arrangement: int = 0, pairing=None, fault: GameFault | None = None) -> GameResult:
    if winners is None:
        best = max(scores)
        winners = (scores.index(best),) if scores.count(best) == 1 else ()
    if status is None:
        status = "forfeit" if fault else ("win" if winners else "draw")
    return GameResult(
        game_id=game_id, pairing=tuple(pairing or sorted(teams)), deal=deal, arrangement=arrangement,
        teams=tuple(teams), seed=deal, status=status, winners=tuple(winners), scores=tuple(scores),
        fault=fault,
    )


def folder_secret(out: Path) -> bytes:
    return bytes.fromhex((out / SECRET_FILE).read_text())


def result_lines(out: Path) -> dict[int, dict]:
    """Each game's results.jsonl line as JSON, by game id, every line authentic, without
    its timing, its record's hash (a record holds its start time) and its seq (the order
    in which games finished, which parallel games and resumes change) and version (a version-2
    line read back stays version 2)."""
    parsed = parse_results((out / "results.jsonl").read_bytes(), secret=folder_secret(out))
    assert parsed.dropped == 0 and parsed.rejected == []
    return {i: {k: v for k, v in r.to_json().items() if k not in ("duration_s", "record_sha256", "times", "seq", "v")}
            for i, r in parsed.results.items()}


def skill(name: str) -> int:
    """Fake strength of an entrant: digits in its name (``bot7`` → 7)."""
    return int("".join(c for c in name if c.isdigit()) or 0)


class FakePlay:
    """A scripted ``run_match``: the score of a team is a hash of the deal seed,
    its entrant and its team number plus the entrant's skill, so duplicate deals
    and resumes are deterministic; optional virtual delays; entrants named
    ``crash*`` forfeit with EXITED at seat of their team."""

    def __init__(self, *, delay=None, fail_on: int | None = None) -> None:
        self.calls: list[int] = []  # seeds, in call order
        self.delay = delay
        self.fail_on = fail_on
        self.running = 0
        self.max_running = 0

    async def __call__(self, game, options, bots, *, seed, record_path: Path | None, limits, stderr_dir, hide=()):
        self.calls.append(seed)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            if self.delay is not None:
                await trio.sleep(self.delay(len(self.calls)))
            if self.fail_on is not None and len(self.calls) == self.fail_on:
                raise RuntimeError("engine exploded")
            num_teams = 3 if game == "schmier" else 2
            teams = [bots[t].name for t in range(num_teams)]
            if record_path is not None:
                record_path.parent.mkdir(parents=True, exist_ok=True)
                record_path.write_text('{"record":"header"}\n{"record":"result"}\n')
            crash = next((t for t, n in enumerate(teams) if n.startswith("crash")), None)
            if crash is not None:
                outcome = Outcome("forfeit", tuple(t for t in range(num_teams) if t != crash),
                                  (0,) * num_teams, reason="exited")
                fault = Fault(crash, FaultReason.EXITED, "exit code 3")
            else:
                scores = tuple(stable_hash(seed, n, t) % 50 + 10 * skill(n) for t, n in enumerate(teams))
                best = max(scores)
                winners = (scores.index(best),) if scores.count(best) == 1 else ()
                outcome = Outcome("win" if winners else "draw", winners, scores, reason="target_reached")
                fault = None
            return MatchResult(game=game, seed=seed, options=options, seats=list(bots), outcome=outcome,
                               fault=fault, decisions=10, duration_s=0.01, record_path=record_path)
        finally:
            self.running -= 1
