"""Per-worker checks of a Dask run (docs/distributed.md, "Trust at scale"): pure functions.

A worker is a machine you may not fully trust (overloaded, broken, tampered
with).  After a ``--dask`` run, each worker's games are compared with the other
workers' games of the same pairing: the first-named entrant of the pairing wins
some share of its games on each worker, and a worker whose share differs from
the rest's more than chance allows is flagged.  The test is Fisher's exact test
on the 2x2 table (wins, other games) x (this worker, the rest), two-sided; the
p-values are Bonferroni-corrected over every (worker, pairing) tested, so a run
with many workers does not flag one by chance alone (at ``ALPHA`` = 0.01, a
run of honest workers is flagged at most 1% of the time).

None of this is in ``standings.json``: the standings of a Dask run are byte for
byte those of a local run.  It goes to ``cluster.json`` and to the lines printed
after the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from math import comb

ALPHA = 0.01  # family-wise: a flag means p < ALPHA after the Bonferroni correction
MIN_GAMES = 10  # a worker with fewer games of a pairing is not tested on it (no power)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value of Fisher's exact test of the 2x2 table [[a, b], [c, d]]:
    the probability, with the margins fixed, of a table at most as likely as this one."""
    if min(a, b, c, d) < 0:
        raise ValueError("counts must be >= 0")
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    total = comb(n, col1)

    def p(x: int) -> float:
        return comb(row1, x) * comb(n - row1, col1 - x) / total

    observed = p(a)
    low, high = max(0, col1 - (n - row1)), min(row1, col1)
    return min(1.0, sum(q for x in range(low, high + 1) if (q := p(x)) <= observed * (1 + 1e-9)))


def bonferroni(p_values: Sequence[float]) -> list[float]:
    """Each p-value times the number of tests, at most 1."""
    m = len(p_values)
    return [min(1.0, p * m) for p in p_values]


@dataclass(frozen=True, slots=True)
class Game:
    """What the checks need of one game: who played it, its pairing, whether the
    pairing's first entrant won it, and whether a bot faulted."""

    worker: str
    pairing: tuple[str, ...]
    first_won: bool
    fault: bool


@dataclass(frozen=True, slots=True)
class WorkerCheck:
    worker: str
    pairing: tuple[str, ...]
    games: int
    wins: int  # of the pairing's first entrant, on this worker
    rest_games: int
    rest_wins: int
    p: float  # Fisher's exact test, two-sided
    p_adjusted: float  # Bonferroni over every test of the run
    flagged: bool

    def to_json(self) -> dict:
        return {"worker": self.worker, "pairing": list(self.pairing), "games": self.games, "wins": self.wins,
                "rest_games": self.rest_games, "rest_wins": self.rest_wins, "p": self.p,
                "p_adjusted": self.p_adjusted, "flagged": self.flagged}


def per_worker_counts(games: Iterable[Game]) -> dict[str, dict[str, int]]:
    """Worker -> {"games", "faults"}."""
    out: dict[str, dict[str, int]] = {}
    for g in games:
        row = out.setdefault(g.worker, {"games": 0, "faults": 0})
        row["games"] += 1
        row["faults"] += g.fault
    return dict(sorted(out.items()))


def homogeneity(games: Iterable[Game], *, alpha: float = ALPHA, min_games: int = MIN_GAMES) -> list[WorkerCheck]:
    """For each pairing and each worker with at least ``min_games`` of it (and as many
    played elsewhere): its first entrant's wins there against the rest's.

    Outliers are taken out one at a time: once the most extreme worker of a pairing
    is flagged, the others are tested again against the rest without it (one broken
    worker would otherwise drag the rest's share and make honest ones look odd).
    The Bonferroni factor stays the number of tests of the first pass."""
    table: dict[tuple[str, ...], dict[str, list[int]]] = {}
    for g in games:
        row = table.setdefault(g.pairing, {}).setdefault(g.worker, [0, 0])
        row[0] += 1
        row[1] += g.first_won

    def tests_of(pairing: tuple[str, ...], workers: Mapping[str, list[int]]) -> list[WorkerCheck]:
        all_games = sum(n for n, _ in workers.values())
        all_wins = sum(w for _, w in workers.values())
        out = []
        for worker, (n, w) in sorted(workers.items()):
            rn, rw = all_games - n, all_wins - w
            if n >= min_games and rn >= min_games:
                out.append(WorkerCheck(worker, pairing, n, w, rn, rw, fisher_exact(w, n - w, rw, rn - rw), 1.0,
                                       False))
        return out

    m = sum(len(tests_of(p, ws)) for p, ws in table.items())
    checks: list[WorkerCheck] = []
    for pairing, workers in sorted(table.items()):
        left = dict(workers)
        flagged: list[WorkerCheck] = []
        while True:
            current = [replace(c, p_adjusted=min(1.0, c.p * m)) for c in tests_of(pairing, left)]
            worst = min(current, key=lambda c: c.p, default=None)
            if worst is None or worst.p_adjusted >= alpha:
                break
            flagged.append(replace(worst, flagged=True))
            del left[worst.worker]
        checks += flagged + [c for c in current if c.worker not in {f.worker for f in flagged}]
    return sorted(checks, key=lambda c: (c.pairing, c.worker))


def cluster_report(games: Iterable[Game], audits: Sequence[Mapping], mismatches: Sequence[Mapping],
                   audit_skipped: int = 0) -> dict:
    """``cluster.json``: per worker games and faults, the homogeneity checks, the audits."""
    games = list(games)
    return {
        "workers": per_worker_counts(games),
        "homogeneity": [c.to_json() for c in homogeneity(games)],
        "alpha": ALPHA,
        "audits": {"compared": len(audits), "mismatches": list(mismatches), "skipped": audit_skipped},
    }


def report_lines(report: Mapping) -> list[str]:
    """What is printed after a Dask run: a line per worker, then one per flag and mismatch."""
    lines = []
    flagged = {c["worker"] for c in report["homogeneity"] if c["flagged"]}
    for worker, row in report["workers"].items():
        unlike = ", results unlike the other workers' (see cluster.json)" if worker in flagged else ""
        lines.append(f"{worker}: {row['games']} games, {row['faults']} faults{unlike}")
    lines.extend(f"{c['worker']}: {' v '.join(c['pairing'])}: {c['pairing'][0]} won {c['wins']} of "
                 f"{c['games']} here, {c['rest_wins']} of {c['rest_games']} elsewhere "
                 f"(p = {c['p_adjusted']:.2g} after Bonferroni)" for c in report["homogeneity"] if c["flagged"])
    audits = report["audits"]
    if audits["compared"] or audits["skipped"]:
        lines.append(f"audits: {audits['compared']} chunks replayed on another worker, "
                     f"{len(audits['mismatches'])} differed" +
                     (f", {audits['skipped']} not replayed (no other worker)" if audits["skipped"] else ""))
    return lines
