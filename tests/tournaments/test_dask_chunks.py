"""Chunks on a real Dask cluster, on 127.0.0.1 only (`dask scheduler` and `dask worker`
processes on free ports, no dashboard): at several batch sizes, after a worker is killed
mid-chunk, after the coordinator is killed and resumed, and after a spool transfer fails,
a `--dask` run gives the per-game results and the standings bytes of a local run; an audit
of a bot that is not deterministic names both workers."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import trio

pytest.importorskip("distributed")

from tournaments.runner import run_tournament  # noqa: E402

from .helpers import SECRET, result_lines  # noqa: E402
from .test_dask import RANDOM_BOT, ROOT, TIED, Cluster, count_lines, one_line_error, referee, tournament  # noqa: E402

DEALS = 4
GAMES = 2 * DEALS  # 2 entrants x 4 deals x 2 seatings: 4 units of 2 games


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.add_worker()
        c.add_worker()
        c.wait_for_workers(2)
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "out"
    run = trio.run(lambda: run_tournament(tournament(out, jobs=2, games_per_pairing=DEALS)))
    assert run.played == GAMES
    return out


def same_as_local(out: Path, local: Path) -> None:
    assert count_lines(out / "results.jsonl") == GAMES  # one line per game: none lost, none twice
    assert result_lines(out) == result_lines(local)
    assert (out / "standings.json").read_bytes() == (local / "standings.json").read_bytes()
    for game_id in range(GAMES):  # every record and stderr folder came back
        here = (out / "records" / f"{game_id:06d}.jsonl").read_text().splitlines()
        there = (local / "records" / f"{game_id:06d}.jsonl").read_text().splitlines()
        assert len(here) == len(there) > 100
        assert here[-1].startswith('{"record":"result"') or '"result"' in here[-1]
    assert sorted(p.name for p in (out / "stderr").iterdir()) == sorted(p.name for p in (local / "stderr").iterdir())


@pytest.mark.parametrize("batch", [4, 5, GAMES])  # 2 units; 5 rounded up to 3 units; the whole run
def test_a_chunked_run_equals_a_local_run(cluster, local_run, tmp_path, batch):
    out = tmp_path / "out"
    run = trio.run(lambda: run_tournament(tournament(out, dask=cluster.address, batch=batch,
                                                     games_per_pairing=DEALS)))
    assert run.played == GAMES
    same_as_local(out, local_run)
    cluster_json = json.loads((out / "cluster.json").read_text())
    assert sum(w["games"] for w in cluster_json["workers"].values()) == GAMES
    assert all(name.startswith("worker tcp://127.0.0.1:") for name in cluster_json["workers"])
    assert "worker" not in (out / "standings.json").read_text()


def spooled_records() -> dict[int, int]:
    """Worker process id -> records in its spools now (the workers run on this machine)."""
    found: dict[int, int] = {}
    for record in Path(tempfile.gettempdir()).glob("referee-run-*-pid*-*/spool/*/*/record.jsonl"):
        match = re.search(r"-pid(\d+)-", str(record))
        if match:
            found[int(match.group(1))] = found.get(int(match.group(1)), 0) + 1
    return found


def test_a_worker_killed_mid_chunk_costs_no_game_and_counts_none_twice(local_run, tmp_path):
    c = Cluster(tmp_path)
    killed: list[int] = []
    out = tmp_path / "out"
    try:
        c.add_worker()
        c.add_worker()
        c.wait_for_workers(2)
        with c.client() as client:  # this cluster's worker processes: the temporary folder holds
            mine = set(client.run(os.getpid).values())  # other test processes' Dask runs too

        def kill_a_worker_mid_chunk() -> None:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                # A worker with a game of its chunk done and the chunk's next game under way.
                busy = [pid for pid, n in spooled_records().items() if pid in mine and n >= 1]
                if busy:
                    os.killpg(os.getpgid(busy[0]), signal.SIGKILL)  # its nanny too: the machine is gone
                    killed.append(busy[0])
                    return
                time.sleep(0.01)

        async def main():
            async with trio.open_nursery() as nursery:
                nursery.start_soon(trio.to_thread.run_sync, kill_a_worker_mid_chunk)
                return await run_tournament(tournament(out, dask=c.address, batch=GAMES // 2,
                                                       games_per_pairing=DEALS))

        run = trio.run(main)
    finally:
        c.close()
    assert killed, "a worker was killed in the middle of its chunk"
    assert run.played == GAMES
    same_as_local(out, local_run)


def test_a_coordinator_killed_and_resumed_ends_as_an_uninterrupted_run(cluster, local_run, tmp_path):
    toml = tmp_path / "t.toml"
    command = json.dumps([sys.executable, str(RANDOM_BOT), "{seed}"])
    entrants = "".join(f'[[entrants]]\nname = "{n}"\ncommand = {command}\n' for n in ("a", "b"))
    toml.write_text(f'game = "back-alley"\nseed = 11\ngames_per_pairing = {DEALS}\nbatch = 2\n'
                    f'[limits]\ndecision_s = 30.0\nhandshake_s = 60.0\n{entrants}')
    out = tmp_path / "out"
    args = ["run", toml, "--dask", cluster.address, "--secret", SECRET.hex(), "--output", out, "-q"]
    proc = subprocess.Popen([sys.executable, "-m", "referee", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while count_lines(out / "results.jsonl") < 2:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    kept = count_lines(out / "results.jsonl")
    assert 2 <= kept < GAMES
    res = referee(*args)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert f"resuming, {kept} already played" in res.stderr
    same_as_local(out, local_run)


def test_an_audit_of_a_bot_that_is_not_deterministic_names_both_workers(cluster, tmp_path, capsys):
    out = tmp_path / "out"
    unseeded = [{"name": n, "command": [sys.executable, str(RANDOM_BOT)]} for n in ("a", "b")]  # no {seed}
    run = trio.run(lambda: run_tournament(tournament(out, dask=cluster.address, batch=2, audit=1.0,
                                                     games_per_pairing=2, entrants=unseeded)))
    assert run.played == 4
    report = json.loads((out / "cluster.json").read_text())
    assert report["audits"]["compared"] == 2  # every chunk (audit = 1.0), each on the other worker
    assert report["audits"]["mismatches"], report
    for m in report["audits"]["mismatches"]:
        assert m["worker"] != m["auditor"] and m["differ"]
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("referee: audit: chunk")]
    assert lines and all(line.count("worker tcp://127.0.0.1:") == 2 for line in lines), err


@pytest.mark.slow
def test_a_failed_spool_transfer_replays_the_chunk_with_a_line(local_run, tmp_path, capsys):
    c = Cluster(tmp_path)
    out = tmp_path / "out"
    try:
        c.add_worker()
        c.add_worker()
        c.wait_for_workers(2)
        with c.client() as client:
            first = sorted(client.nthreads())[0]

            def die_on_fetch():  # on that worker: its first spool transfer kills it (a machine lost)
                import tournaments.dask_executor as d

                d.fetch_spool = lambda *args, **kwargs: os._exit(1)

            client.run(die_on_fetch, workers=[first])
        run = trio.run(lambda: run_tournament(tournament(out, dask=c.address, batch=2, games_per_pairing=DEALS)))
    finally:
        c.close()
    assert run.played == GAMES
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if "could not be fetched" in x]
    assert lines and all(x.startswith("referee: the records of chunk ") and x.endswith("its games are replayed")
                         for x in lines), err
    same_as_local(out, local_run)


def run_args(tmp_path: Path, *extra) -> list:
    return ["run", "--game", "back-alley", "-n", "2", "--entrant", f"a={sys.executable} {RANDOM_BOT}",
            "--entrant", f"b={sys.executable} {RANDOM_BOT}", "--output", tmp_path / "out", "-q", *extra]


@pytest.mark.parametrize(("extra", "says"), [
    (["--batch", "0", "--dask", "local:1"], "batch: Input should be greater than or equal to 1"),
    (["--batch", "5", "--dask", "local:1"], "batch = 5 games is more than the whole run (4 games)"),
    (["--audit", "1.5", "--dask", "local:1"], "audit: Input should be less than or equal to 1"),
    (["--audit", "x", "--dask", "local:1"], "Invalid value for '--audit'"),
    (["--batch", "2"], "batch: a setting of Dask runs only"),
    (["--shared-output"], "shared_output: a setting of Dask runs only"),
])
def test_bad_chunk_settings_are_refused_in_one_line(tmp_path, extra, says):
    line = one_line_error(referee(*run_args(tmp_path, *extra)))
    assert says in line, line
    assert not (tmp_path / "out").exists()


def test_with_shared_output_the_workers_write_the_records_themselves(cluster, tmp_path):
    res = referee(*run_args(tmp_path, "--dask", cluster.address, "--shared-output"))
    assert res.returncode == 0, res.stderr  # the workers run on this machine: they see the folder
    assert (tmp_path / "out" / ".referee-shared-output").exists()
    assert count_lines(tmp_path / "out" / "results.jsonl") == 4
    assert len(list((tmp_path / "out" / "records").glob("*.jsonl"))) == 4


def test_shared_output_that_a_worker_cannot_see_is_refused_in_one_line(tmp_path):
    out = tmp_path / "hidden" / "out"
    out.parent.mkdir()
    c = Cluster(tmp_path)
    try:
        # A worker that sees an empty folder where the coordinator's output is (bubblewrap
        # mounts a tmpfs over it): a machine that does not share the folder.
        log = (tmp_path / "worker.log").open("ab")
        tied = [sys.executable, str(TIED), str(os.getpid())]
        c.procs.append(subprocess.Popen(
            [*tied, "bwrap", "--dev-bind", "/", "/", "--tmpfs", str(out.parent), sys.executable, "-m",
             "distributed.cli.dask_worker", c.address, "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
            stdout=log, stderr=log, start_new_session=True))
        c.wait_for_workers(1)
        res = referee(*["run", "--game", "back-alley", "--entrant", f"a={sys.executable} {RANDOM_BOT}",
                       "--entrant", f"b={sys.executable} {RANDOM_BOT}", "--output", out, "-q",
                       "--dask", c.address, "--shared-output"])
    finally:
        c.close()
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("referee: error: worker tcp://127.0.0.1:") and "--shared-output: cannot read" in line
    assert "the output folder is not shared with this worker" in line
    assert count_lines(out / "results.jsonl") == 0


def test_the_display_shows_workers_and_chunks_and_the_run_ends_with_a_line_per_worker(cluster, tmp_path):
    args = [a for a in run_args(tmp_path, "--dask", cluster.address, "--batch", "2") if a != "-q"]
    res = referee(*args)
    assert res.returncode == 0, res.stderr
    status = [x for x in res.stderr.splitlines() if x.startswith("dask: ")]
    assert status and re.fullmatch(r"dask: 2 workers, chunks 0 queued 0 running 2 done, [0-9.]+ games/s",
                                   status[-1]), res.stderr
    per_worker = [x for x in res.stderr.splitlines() if x.startswith("worker tcp://127.0.0.1:")]
    assert sum(int(re.search(r": (\d+) games, 0 faults$", x).group(1)) for x in per_worker) == 4, res.stderr
    assert (tmp_path / "out" / "cluster.json").exists()


@pytest.mark.slow
def test_a_kept_bots_stderr_between_games_reaches_the_output_folder_as_locally(cluster, tmp_path):
    """A long-lived bot that writes to stderr 0.3 s after each game_over (into its last game's
    log, between games, often after its chunk's files were fetched): every such line is in
    the output folder, as many as a local run keeps, and no process played a deal twice."""
    from .test_dask import remembering_copy

    bot = remembering_copy(tmp_path)
    bot.write_text(bot.read_text().replace(
        '''        elif kind == "game_over" and games == chatter:''',
        '''        elif kind == "game_over":
            # Later, from a thread: while this process waits for its next game (the
            # next seating of the deal goes to another process), into this game's log.
            threading.Timer(0.3, lambda i=ident: print(f"after game_over pid={i}", file=sys.stderr,
                                                       flush=True)).start()
        if kind == "game_over" and games == chatter:''').replace("import sys\n", "import sys\nimport threading\n", 1))
    entrants = [{"name": n, "command": [sys.executable, str(bot)]} for n in ("a", "b")]

    def after_lines(out: Path) -> int:
        return sum(p.read_text().count("after game_over") for p in (out / "stderr").rglob("*.log"))

    local = trio.run(lambda: run_tournament(tournament(tmp_path / "local", entrants=entrants, jobs=2,
                                                       games_per_pairing=DEALS)))
    out = tmp_path / "out"
    run = trio.run(lambda: run_tournament(tournament(out, entrants=entrants, dask=cluster.address, batch=4,
                                                     games_per_pairing=DEALS)))
    assert run.played == local.played == GAMES
    assert after_lines(tmp_path / "local") == after_lines(out) == 4 * GAMES  # one per seat and game
    assert "SEEN TWICE" not in "".join(p.read_text() for p in (out / "stderr").rglob("*.log"))
    assert result_lines(out) == result_lines(tmp_path / "local")
