"""Chunks of whole duplicate units (tournaments/chunks.py), the per-worker checks of a Dask run
(tournaments/cluster_checks.py) and the runner's chunk path (runner._run_chunked): pure, no Dask."""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

import pytest
import trio

from tournaments import cluster_checks
from tournaments.chunks import TARGET_S, ChunkPlanner, audited, units_for_batch, units_of
from tournaments.cluster_checks import Game, bonferroni, fisher_exact, homogeneity
from tournaments.config import parse, resolve
from tournaments.output import open_output
from tournaments.runner import _run_chunked, run_tournament

from .helpers import SECRET, FakePlay, result_lines

ROOT = Path(__file__).resolve().parents[2]


def tournament(out: Path, game: str = "back-alley", names=("a", "b"), deals: int = 4, **more):
    data = {"game": game, "seed": 5, "games_per_pairing": deals, "output": str(out),
            "entrants": [{"name": n, "command": [sys.executable, "-c", "pass"]} for n in names], **more}
    return resolve(parse(data), ROOT, check_commands=False).with_secret(SECRET)


# ---------------------------------------------------------------------------
# Chunks


def test_a_chunk_holds_whole_units_in_order_and_chunks_are_disjoint(tmp_path):
    t = tournament(tmp_path / "out", game="schmier", names=("a", "b", "c"), deals=5)  # 6 seatings a deal
    games = t.schedule()
    units = units_of(games)
    assert len(units) == 5 and all(len(u) == 6 and len({g.deal_key for g in u}) == 1 for u in units)
    planner = ChunkPlanner(games, batch=7)  # 7 games: rounded up to 2 units (12 games)
    chunks = []
    while (c := planner.next(threads=4)) is not None:
        chunks.append(c)
    assert [len(c.games) for c in chunks] == [12, 12, 6]
    assert [c.id for c in chunks] == [c.games[0].id for c in chunks]
    seen = [g.id for c in chunks for g in c.games]
    assert sorted(seen) == [g.id for g in games] and len(set(seen)) == len(seen)  # every game once
    deals = [{g.deal_key for g in c.games} for c in chunks]
    assert all(a.isdisjoint(b) for i, a in enumerate(deals) for b in deals[i + 1:])


def test_a_batch_is_rounded_up_to_whole_units():
    assert [units_for_batch(k, 2) for k in (1, 2, 3, 4, 5)] == [1, 1, 2, 2, 3]
    assert units_for_batch(6, 6) == 1 and units_for_batch(7, 6) == 2
    with pytest.raises(ValueError):
        units_for_batch(0, 2)


def test_the_default_chunk_is_measured_first_then_lasts_about_the_target_and_shrinks_at_the_end(tmp_path):
    t = tournament(tmp_path / "out", deals=400)  # 400 units of 2 games
    planner = ChunkPlanner(t.schedule(), batch=None)
    first = planner.next(threads=2)
    assert first is not None and first.units == 1  # nothing measured yet
    planner.measured(seconds=2.0, games=2)  # a game lasts 1 s: a unit 2 s
    assert planner.size(threads=2) == round(TARGET_S / 2.0)  # about TARGET_S a chunk
    assert planner.size(threads=200) == 399 // (3 * 200) or planner.size(threads=200) == 1
    assert planner.size(threads=200) < planner.size(threads=2)  # many workers: smaller chunks, none starves
    planner.measured(seconds=0.001, games=1)
    planner.measured(seconds=0.001, games=1)  # the median: fast games, bigger chunks, capped by the tail
    assert planner.size(threads=2) == 399 // (3 * 2)


def test_audited_chunks_are_a_reproducible_share_chosen_by_the_seed():
    picks = [audited(i, seed=7, share=0.1) for i in range(20000)]
    assert picks == [audited(i, seed=7, share=0.1) for i in range(20000)]
    assert 0.09 < sum(picks) / len(picks) < 0.11
    assert picks != [audited(i, seed=8, share=0.1) for i in range(20000)]
    assert not any(audited(i, seed=7, share=0.0) for i in range(1000))
    assert all(audited(i, seed=7, share=1.0) for i in range(1000))


# ---------------------------------------------------------------------------
# Per-worker checks


def test_fishers_exact_test_gives_the_textbook_values():
    # Fisher's lady tasting tea: 3 of 4 right each way, two-sided p = 34/70.
    assert fisher_exact(3, 1, 1, 3) == pytest.approx(34 / 70)
    assert fisher_exact(1, 9, 11, 3) == pytest.approx(0.002759, abs=1e-6)  # Wikipedia's worked example
    assert fisher_exact(5, 5, 5, 5) == pytest.approx(1.0)
    assert fisher_exact(0, 0, 0, 0) == 1.0
    assert bonferroni([0.001, 0.2, 0.5]) == pytest.approx([0.003, 0.6, 1.0])


def games_of(worker: str, n: int, win_rate: float, rng: random.Random) -> list[Game]:
    return [Game(worker, ("a", "b"), rng.random() < win_rate, False) for _ in range(n)]


def test_a_worker_whose_results_are_unlike_the_others_is_flagged_and_honest_ones_are_not():
    rng = random.Random(3)
    honest = [g for w in ("w1", "w2", "w3", "w4") for g in games_of(w, 200, 0.5, rng)]
    checks = homogeneity(honest)
    assert len(checks) == 4 and not any(c.flagged for c in checks)
    broken = honest + games_of("w5", 200, 0.15, rng)  # its first entrant loses: a broken node
    checks = {c.worker: c for c in homogeneity(broken)}
    assert checks["w5"].flagged and checks["w5"].p_adjusted < cluster_checks.ALPHA
    assert not any(c.flagged for w, c in checks.items() if w != "w5")
    assert checks["w5"].p_adjusted == pytest.approx(min(1.0, checks["w5"].p * 5))  # corrected for 5 tests
    report = cluster_checks.cluster_report(broken, audits=[{}], mismatches=[])
    assert report["workers"]["w5"] == {"games": 200, "faults": 0}
    lines = cluster_checks.report_lines(report)
    assert any(line.startswith("w5: a v b: a won") for line in lines)
    assert lines[-1] == "audits: 1 chunks replayed on another worker, 0 differed"


def test_the_honest_false_alarm_rate_is_at_most_alpha():
    rng = random.Random(11)
    alarms = 0
    runs = 200
    for _ in range(runs):
        games = [g for w in ("w1", "w2", "w3", "w4", "w5", "w6") for g in games_of(w, 40, 0.5, rng)]
        alarms += any(c.flagged for c in homogeneity(games))
    assert alarms / runs <= 0.03  # family-wise ALPHA = 0.01, with room for 200 draws
    assert homogeneity(games_of("w1", 5, 0.5, rng) + games_of("w2", 50, 0.5, rng)) == []  # too few: untested


# ---------------------------------------------------------------------------
# The runner's chunk path, with a fake executor


class TwiceExecutor:
    """Plays each chunk with a fake match runner and delivers it twice (as if Dask had run it
    twice after a worker death), from two workers."""

    def __init__(self) -> None:
        self.chunk_status: dict = {}
        self.audited: list = []
        self.mismatches: list = []
        self.audit_skipped = 0
        self.chunks: list[list[int]] = []

    async def play_chunks(self, planner, jobs_for, deliver, should_stop=lambda: False, *, audit=0.0, seed=0,
                          note=lambda line: None):
        play = FakePlay()
        from referee.match.types import BotSpec, Limits

        while (chunk := planner.next(2)) is not None:
            self.chunks.append([g.id for g in chunk.games])
            games = []
            for job in jobs_for(chunk):
                match = await play(job["game"], job["options"], [BotSpec.from_json(b) for b in job["bots"]],
                                   seed=job["seed"], record_path=Path(job["record_path"]),
                                   limits=Limits.from_json(job["limits"]), stderr_dir=None)
                games.append((job["id"], match))
            await deliver(chunk, "worker-1", games)
            await deliver(chunk, "worker-2", games)


def test_a_chunk_delivered_twice_is_written_once_and_equals_a_local_run(tmp_path):
    local = trio.run(lambda: run_tournament(tournament(tmp_path / "local", deals=6), play=FakePlay()))
    assert local.played == 12
    t = tournament(tmp_path / "out", deals=6, dask="local:1", batch=4)
    opened = open_output(t)
    executor = TwiceExecutor()
    run = trio.run(lambda: _run_chunked(opened.tournament, None, executor, opened.done,
                                        opened.tournament.schedule()))
    assert executor.chunks == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]  # 2 units a chunk
    assert (tmp_path / "out" / "results.jsonl").read_bytes().count(b"\n") == 12 == run.played
    assert result_lines(tmp_path / "out") == result_lines(tmp_path / "local")
    assert (tmp_path / "out" / "standings.json").read_bytes() == (tmp_path / "local" / "standings.json").read_bytes()
    cluster = json.loads((tmp_path / "out" / "cluster.json").read_text())
    assert cluster["workers"] == {"worker-1": {"games": 12, "faults": 0}}  # the second delivery counted nowhere
    assert "cluster" not in (tmp_path / "out" / "standings.json").read_text()
    assert run.cluster == cluster and math.isclose(cluster["alpha"], cluster_checks.ALPHA)
