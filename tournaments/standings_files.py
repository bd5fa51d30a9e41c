"""The standings files of a tournament: ``standings.json`` and ``standings.csv``
in its output directory, each rewritten atomically (``tournaments.durable``).
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from referee.games import get_game

from .config import Tournament
from .durable import write_atomic
from .results import GameResult
from .sprt import SprtRun
from .standings import FirstDealer, Standings, compute_standings

CSV_COLUMNS = [
    "rank", "name", "games", "wins", "draws", "losses", "aborted", "forfeits", "forfeits_by_reason",
    "opponent_forfeits", "win_rate", "win_rate_lo", "win_rate_hi", "score_diff", "score_diff_lo",
    "score_diff_hi", "score_diff_games", "mu", "sigma", "rating",
    "rank_label", "units", "elo", "elo_lo", "elo_hi", "los", "nelo", "points", "score",
]


def standings_paths(output: Path) -> tuple[Path, Path]:
    """Where a tournament's standings.json and standings.csv are."""
    return output / "standings.json", output / "standings.csv"


def write_standings(output: Path, standings: Standings) -> tuple[Path, Path]:
    data = standings.to_json()
    json_path, csv_path = standings_paths(output)
    write_atomic(json_path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    write_atomic(csv_path, standings_csv(data).encode("utf-8"))
    return json_path, csv_path


def first_dealer(t: Tournament) -> FirstDealer:
    """The first dealer's seat of a game: the game's own, drawn from its deal seed (RULES 0.4)."""
    spec = get_game(t.game)

    @functools.lru_cache(maxsize=4096)
    def of_seed(seed: int) -> int:
        _state, events = spec.new_game(seed, t.options)
        return int(events[0].data["dealer"])

    return lambda result: of_seed(result.seed)


def current_standings(t: Tournament, results: Mapping[int, GameResult], sprt: SprtRun | None = None,
                      *, finished: bool = False) -> Standings:
    """Standings of the games finished so far (with the SPRT's state, for an SPRT run)."""
    standings = compute_standings(t.names, t.num_teams, results.values(), games_total=t.total_games(),
                                  network=t.network_entrants, first_dealer=first_dealer(t))
    standings.overrides = t.overrides
    if sprt is not None:
        standings.extra["sprt"] = sprt.status(results.values()).to_json(finished=finished)
        standings.extra["sprt"]["history"] = [[u, round(v, 6)] for u, v in sprt.history(results.values())]
    return standings


def write_current_standings(t: Tournament, results: Mapping[int, GameResult], sprt: SprtRun | None = None,
                            *, finished: bool = False) -> Standings:
    """Standings of the games finished so far, written to standings.json / .csv."""
    standings = current_standings(t, results, sprt, finished=finished)
    write_standings(t.output, standings)
    return standings


def standings_csv(data: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for e in data["entrants"]:
        wr, sd, rt = e["win_rate"], e["score_diff"], e["rating"]
        reasons = " ".join(f"{k}={v}" for k, v in e["forfeits_by_reason"].items())
        w.writerow([
            e["rank"], e["name"], e["games"], e["wins"], e["draws"], e["losses"], e["aborted"],
            e["forfeits"], reasons, e["opponent_forfeits"],
            _csv(wr["value"]), _csv(wr["lo"]), _csv(wr["hi"]),
            _csv(sd["value"]), _csv(sd["lo"]), _csv(sd["hi"]), sd["games"],
            _csv(rt["mu"]), _csv(rt["sigma"]), _csv(rt["ordinal"]),
            e["rank_label"], e["elo"]["units"], _csv(e["elo"]["elo"]), _csv(e["elo"]["lo"]), _csv(e["elo"]["hi"]),
            _csv(e["elo"]["los"]), _csv(e["elo"]["nelo"]), _csv(e["points"]), _csv(e["score"]),
        ])
    return buf.getvalue()


def _csv(x: float | None) -> str:
    return "" if x is None else f"{x:.6g}"
