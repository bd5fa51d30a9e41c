"""What a report may publish from a tournament's output folder: only authenticated results.

``results.jsonl`` and ``standings.json`` are files anyone with access to the folder can
edit.  With the folder's ``secret`` (``output.SECRET_FILE``), ``audit_output`` checks
every line's MAC (``results.parse_results``), finds deleted lines from the lines'
``seq`` numbers (``results.check_sequence``, counting what a resume set aside), and
recomputes the standings from the lines that pass; ``standings.json`` is only a cache,
compared with the recomputation (a difference is reported and the recomputed standings
are shown).  The games the cache counts beyond the authenticated lines betray a deleted
last line, which leaves no gap in the numbering.  Without the secret nothing can be
checked: the cached standings and the lines are shown as they are, and the notes say so.

The SPRT block of an SPRT run is taken from the cache (its settings are not in the
folder's files); the notes say so when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.games import get_game
from referee.games.base import GameError
from referee.inputs import parse_json, read_input

from .config import ConfigError, parse_secret
from .output import CONFIG_FILE, RESULTS_FILE, SECRET_FILE, OutputDir, set_aside_results
from .results import GameResult, SequenceCheck, check_sequence, parse_results
from .standings import compute_standings
from .standings_files import standings_paths


class AuditError(ConfigError):
    """The folder cannot be reported on (no standings, unreadable files): a user's fault."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line of ``results.jsonl`` the report does not count."""

    line: int
    game: int | None
    problem: str

    def text(self) -> str:
        return f"line {self.line}{f' (game {self.game})' if self.game is not None else ''}: {self.problem}"


@dataclass(slots=True)
class Audit:
    authenticated: bool  # the folder's secret was there: every counted line passed its MAC
    data: dict[str, Any]  # the standings the page shows (recomputed when authenticated)
    results: list[GameResult]  # the lines counted, one per game, by game id
    rejected: list[Rejected] = field(default_factory=list)
    sequence: SequenceCheck | None = None
    notes: list[str] = field(default_factory=list)  # what the page says about the checks, first the worst

    def summary(self) -> str:
        """One line for stderr: what was checked and what was refused."""
        if not self.authenticated:
            return self.notes[0]
        problems = []
        if self.rejected:
            listed = "; ".join(r.text() for r in self.rejected[:3])
            more = f"; and {len(self.rejected) - 3} more, listed on the page" if len(self.rejected) > 3 else ""
            problems.append(f"{len(self.rejected)} line{'s' if len(self.rejected) != 1 else ''} rejected "
                            f"({listed}{more})")
        if self.sequence is not None and not self.sequence.ok:
            problems.append(self.sequence.describe() + ": their games are not counted")
        problems += [n for n in self.notes if n.startswith("standings.json")]
        checked = f"{len(self.results)} authenticated results"
        return checked + (": " + "; ".join(problems) if problems else ", nothing rejected")


def _read_json(path: Path, kind: str) -> Any:
    """A JSON file of the folder, read within its cap (``referee.inputs``): a regular file, not too
    big, not nested too deep; else ``AuditError`` in one line."""
    if not path.exists() and not path.is_symlink():
        raise AuditError(f"{path} not found: is {path.parent} a tournament's output directory?")
    return parse_json(read_input(path, kind, AuditError), str(path), AuditError)


def _secret(out: OutputDir) -> bytes | None:
    if not out.secret_path.exists() and not out.secret_path.is_symlink():
        return None
    try:
        text = read_input(out.secret_path, "secret file", AuditError).decode("ascii")
    except UnicodeDecodeError:
        raise AuditError(f"{out.secret_path} is unreadable") from None
    return parse_secret(text, str(out.secret_path))


def _recompute(out: OutputDir, cached: dict[str, Any], results: list[GameResult]) -> dict[str, Any]:
    """The standings of ``results`` as the run computes them (``standings_files.current_standings``),
    its settings from ``tournament.json`` and, for what is not there, the cache."""
    doc = _read_json(out.root / CONFIG_FILE, "tournament record")
    try:
        identity = doc["identity"]
        history = doc.get("history")
        names = list(history[-1]["names"]) if history else [e["name"] for e in identity["entrants"]]
        game, options = identity["game"], identity["options"]
        spec = get_game(game)
        num_teams = spec.num_teams(options)
    except (KeyError, TypeError, IndexError, ValueError, GameError):
        raise AuditError(f"{out.root / CONFIG_FILE} is not a tournament's config") from None
    for e in cached.get("entrants", []):  # a grown run: entrants the last shape may not list
        if isinstance(e, dict) and isinstance(e.get("name"), str) and e["name"] not in names:
            names.append(e["name"])
    dealers: dict[int, int] = {}

    def first_dealer(result: GameResult) -> int:
        if result.seed not in dealers:
            _state, events = spec.new_game(result.seed, options)
            dealers[result.seed] = int(events[0].data["dealer"])
        return dealers[result.seed]

    sandbox = cached["sandbox"] if isinstance(cached.get("sandbox"), dict) else {}
    standings = compute_standings(names, num_teams, results, games_total=cached.get("games_total"),
                                  network=list(sandbox.get("network", [])), first_dealer=first_dealer)
    if isinstance(cached.get("overrides"), dict):
        standings.overrides = cached["overrides"]
    data = standings.to_json()
    if "sprt" in cached:
        data["sprt"] = cached["sprt"]
    return data


def audit_output(output: Path) -> Audit:
    """Check the folder ``output`` (see the module docstring).  ``AuditError`` if it holds no
    standings or its files cannot be read."""
    out = OutputDir(output)
    json_path, _ = standings_paths(output)
    cached = _read_json(json_path, "standings file")
    if not isinstance(cached, dict) or not isinstance(cached.get("entrants"), list):
        raise AuditError(f"{json_path}: not a standings file")
    exists = out.results_path.exists() or out.results_path.is_symlink()
    data = read_input(out.results_path, "results file", AuditError) if exists else b""
    secret = _secret(out)
    if secret is None:
        parsed = parse_results(data)
        return Audit(False, cached, sorted(parsed.results.values(), key=lambda r: r.game_id),
                     notes=[f"not authenticated: {output} holds no {SECRET_FILE} file, so the results in "
                            f"{RESULTS_FILE} and standings.json could not be checked; they are shown as they are"])
    parsed = parse_results(data, secret=secret)
    rejected = [Rejected(line.number, line.claimed_game, line.problem or "rejected") for line in parsed.rejected]
    counted = parsed.results
    # a copy of an authentic line counts once, as a resume counts it
    rejected += [Rejected(line.number, line.result.game_id, "a second line for the same game")
                 for line in parsed.lines
                 if line.result is not None and counted.get(line.result.game_id) is not line.result]
    rejected.sort(key=lambda r: r.line)
    aside = set_aside_results(out, secret)
    every = [*parsed.lines, *aside]
    sequence = check_sequence([line.result for line in every if line.result is not None],
                              [line.claimed_seq for line in every if line.result is None
                               and line.claimed_seq is not None])
    results = sorted(counted.values(), key=lambda r: r.game_id)
    shown = _recompute(out, cached, results)
    notes = []
    if not sequence.ok:
        notes.append(f"{RESULTS_FILE}: {sequence.describe()}: their games are not counted")
    if rejected:
        notes.append(f"{RESULTS_FILE}: {len(rejected)} line{'s' if len(rejected) != 1 else ''} rejected "
                     "and not counted (listed below)")
    if {k: v for k, v in shown.items() if k != "sprt"} != {k: v for k, v in cached.items() if k != "sprt"}:
        extra = cached.get("games_played", 0) - shown["games_played"] if isinstance(
            cached.get("games_played"), int) else 0
        why = (f"; it counts {extra} game{'s' if extra != 1 else ''} more than there are authenticated lines "
               "(a deleted last line, or an edit)" if extra > 0 else "")
        notes.append(f"standings.json does not match the authenticated results (edited, or written before "
                     f"the last lines){why}: the standings shown are recomputed from them")
    if "sprt" in cached:
        notes.append("the SPRT figures are standings.json's, not rechecked")
    notes.append(f"authenticated: {len(results)} results in {RESULTS_FILE}, each checked with the folder's "
                 f"{SECRET_FILE}" + (f" ({len(aside)} set aside by a resume)" if aside else ""))
    return Audit(True, shown, results, rejected, sequence, notes)
