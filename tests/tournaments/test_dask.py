"""Tournaments on a real Dask cluster, on 127.0.0.1 only (tournaments/dask_executor.py):
`dask scheduler` and `dask worker` processes on free ports play the same games as a
local run (a worker killed mid-chunk, in test_dask_chunks.py); `referee worker`
refuses other versions; a worker that lacks a bot stops the run naming both; and
`--dask local:2` (plus its Ctrl-C and resume) behaves as a local run."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

pytest.importorskip("distributed")

import dask.config  # noqa: E402
import distributed  # noqa: E402

from tournaments import dask_executor  # noqa: E402
from tournaments.config import DASK_QUIET, parse, resolve  # noqa: E402
from tournaments.dask_executor import (  # noqa: E402
    VERSIONS_KEY,
    check_setup,
    local_versions,
    setup_of,
    version_differences,
)
from tournaments.executors import ExecutorSetupError  # noqa: E402
from tournaments.runner import run_tournament  # noqa: E402

from .helpers import SECRET, result_lines  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
GAMES = 4  # 2 entrants x 2 deals x 2 seatings


def settings(out: Path, **overrides) -> dict:
    data = {"game": "back-alley", "seed": 11, "games_per_pairing": 2, "output": str(out),
            # no timeouts on a loaded machine: a forfeit would break the comparison
            "limits": {"decision_s": 30.0, "handshake_s": 60.0},
            "entrants": [{"name": n, "command": [sys.executable, str(RANDOM_BOT), "{seed}"]} for n in ("a", "b")]}
    data.update(overrides)
    return data


def tournament(out: Path, **overrides):
    return resolve(parse(settings(out, **overrides)), ROOT).with_secret(SECRET)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


TIED = Path(__file__).resolve().parents[1] / "fixtures" / "tied_to_parent.py"


class Cluster:
    """`dask scheduler` and `dask worker` processes on loopback, each in its own session,
    and ended with this test process however it ends (``tied_to_parent.py``)."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.address = f"tcp://127.0.0.1:{free_port()}"
        self.procs: list[subprocess.Popen] = []
        self.scheduler = self._start("scheduler", ["distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                                   "--port", self.address.rsplit(":", 1)[1], "--no-dashboard"])
        self.workers: list[subprocess.Popen] = []

    def _start(self, name: str, args: list[str], env: dict | None = None) -> subprocess.Popen:
        log = (self.logs / f"{name}.log").open("ab")
        tied = [sys.executable, str(TIED), str(os.getpid())]
        proc = subprocess.Popen([*tied, sys.executable, "-m", *args], stdout=log, stderr=log,
                                start_new_session=True, env=env)
        self.procs.append(proc)
        return proc

    def add_worker(self, env: dict | None = None) -> subprocess.Popen:
        name = f"worker{len(self.workers)}"
        proc = self._start(name, ["distributed.cli.dask_worker", self.address, "--nthreads", "1", "--host",
                                  "127.0.0.1", "--no-dashboard", "--name", name], env)
        self.workers.append(proc)
        return proc

    def client(self) -> distributed.Client:
        return distributed.Client(self.address, timeout=60, set_as_default=False)

    def wait_for_workers(self, count: int) -> None:
        with self.client() as c:
            c.wait_for_workers(count, timeout=120)

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_a_cluster_process_ends_when_the_test_process_is_killed(tmp_path):
    """What keeps a killed test run from leaving Dask schedulers and workers behind."""
    pid_file = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", f"""
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, {str(TIED)!r}, str(os.getpid()), sys.executable, "-c",
                          "import time; time.sleep(60)"], start_new_session=True)
open({str(pid_file)!r}, "w").write(str(child.pid))
time.sleep(60)
"""])
    deadline = time.monotonic() + 20
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child = int(pid_file.read_text())
    while "time.sleep" not in Path(f"/proc/{child}/cmdline").read_text():  # the command runs
        assert time.monotonic() < deadline
        time.sleep(0.05)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and "zombie" not in Path(f"/proc/{child}/status").read_text():
        assert time.monotonic() < deadline, "the tied process outlived its parent"
        time.sleep(0.05)


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
    """The reference: the same tournament played by local worker processes."""
    out = tmp_path_factory.mktemp("local") / "out"
    run = trio.run(lambda: run_tournament(tournament(out, jobs=2)))
    assert run.played == GAMES
    return out, run


def same_records(a: Path, b: Path) -> None:
    """Record files line for line, but for timings (decisions, header and result)."""
    for game_id in range(GAMES):
        here = (a / "records" / f"{game_id:06d}.jsonl").read_text().splitlines()
        there = (b / "records" / f"{game_id:06d}.jsonl").read_text().splitlines()
        assert len(here) == len(there) > 100
        keep = [i for i, line in enumerate(here) if not any(
            k in line for k in ('"record":"decision"', '"record":"header"', '"record":"result"'))]
        assert [here[i] for i in keep] == [there[i] for i in keep]


def test_a_tournament_on_a_cluster_equals_a_local_run(cluster, local_run, tmp_path):
    local_out, local = local_run
    out = tmp_path / "out"
    run = trio.run(lambda: run_tournament(tournament(out, dask=cluster.address)))
    assert run.played == GAMES
    assert result_lines(out) == result_lines(local_out)
    assert run.standings.to_json() == local.standings.to_json()
    assert (out / "standings.json").read_bytes() == (local_out / "standings.json").read_bytes()
    same_records(out, local_out)
    # The coordinator published its versions for `referee worker`.
    with cluster.client() as c:
        assert c.get_metadata(VERSIONS_KEY) == local_versions()


def referee(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "referee", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, env=env)


def one_line_error(res) -> str:
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("referee: error: "), res.stderr
    return lines[0]


def test_referee_worker_refuses_other_versions_and_joins_with_the_same(cluster):
    other = {**local_versions(), "rules": {**local_versions()["rules"], "back-alley": "0"}, "dask": "1.0"}
    with cluster.client() as c:
        c.set_metadata(VERSIONS_KEY, other)
    line = one_line_error(referee("worker", cluster.address))
    assert f"cannot play games for {cluster.address}" in line
    assert f"back-alley rules version {local_versions()['rules']['back-alley']} here, 0 there" in line
    assert f"dask {local_versions()['dask']} here, 1.0 there" in line
    with cluster.client() as c:
        assert len(c.nthreads()) == 2  # it did not join

    with cluster.client() as c:
        c.set_metadata(VERSIONS_KEY, local_versions())
        before = set(c.nthreads())
    joined = subprocess.Popen([sys.executable, "-m", "referee", "worker", cluster.address, "--nworkers", "1",
                               "--no-dashboard", "--host", "127.0.0.1"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, start_new_session=True)
    try:
        cluster.wait_for_workers(3)
        with cluster.client() as c:
            assert sorted(c.nthreads().values()) == [1, 1, 1]  # one game at a time per worker
            new = [w for w in c.nthreads() if w not in before]
            # ... and less monitoring than Dask's default (tournaments.config.DASK_QUIET)
            assert c.run(lambda: {k: dask.config.get(k) for k in DASK_QUIET}, workers=new) == {new[0]: DASK_QUIET}
    finally:
        os.killpg(joined.pid, signal.SIGKILL)
        joined.wait()


def test_versions_and_bots_are_checked_against_the_coordinators(tmp_path):
    bot = tmp_path / "bot.py"
    bot.write_text(RANDOM_BOT.read_text())
    t = resolve(parse(settings(tmp_path / "out", entrants=[
        {"name": "a", "command": [sys.executable, str(bot)]},
        {"name": "b", "command": [sys.executable, str(RANDOM_BOT)]}])), ROOT)
    setup = setup_of(t)
    assert check_setup(setup) is None
    assert version_differences(local_versions(), {**local_versions(), "python": "2.7.18"}) == \
        [f"python {local_versions()['python']} here, 2.7.18 there"]
    assert "python" in check_setup({**setup, "versions": {**setup["versions"], "python": "2.7.18"}})
    bot.write_text(RANDOM_BOT.read_text() + "\n# changed\n")
    problem = check_setup(setup)
    assert problem is not None and problem.startswith(f"entrant 'a': {bot} differs from the coordinator's")
    bot.unlink()
    assert check_setup(setup) == f"entrant 'a': script '{bot}' not found ({bot} does not exist)"


def test_a_worker_that_lacks_a_bot_stops_the_run_naming_the_worker_and_the_entrant(cluster, tmp_path):
    # `mybot` is on the coordinator's PATH only: the workers were started without it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mybot").write_text(f"#!/bin/sh\nexec {sys.executable} {RANDOM_BOT} \"$@\"\n")
    (bin_dir / "mybot").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    out = tmp_path / "out"
    res = referee("run", "--game", "back-alley", "--entrant", f"a={sys.executable} {RANDOM_BOT}",
                  "--entrant", "b=mybot {seed}", "--dask", cluster.address, "--output", out, "-q", env=env)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    plan, line = res.stderr.strip().splitlines()  # the plan, then why it stopped
    assert plan.startswith("back-alley: 2 entrants") and line.startswith("referee: error: worker tcp://127.0.0.1:")
    assert "worker tcp://127.0.0.1:" in line and "entrant 'b': command 'mybot' not found on PATH" in line
    assert count_lines(out / "results.jsonl") == 0


def test_a_worker_that_joins_without_a_bot_fails_its_first_game_in_one_line(cluster, tmp_path):
    bot = tmp_path / "bot.py"
    bot.write_text(RANDOM_BOT.read_text())
    t = resolve(parse(settings(tmp_path / "out", entrants=[
        {"name": "a", "command": [sys.executable, str(bot), "{seed}"]},
        {"name": "b", "command": [sys.executable, str(RANDOM_BOT), "{seed}"]}])), ROOT)
    t = dataclasses.replace(t, dask=cluster.address).with_secret(SECRET)

    async def main():
        async with dask_executor.open_dask_executor(t) as ex:  # every worker checked: all well
            # The bot changes after the check; workers that join now (here: forget their
            # verdict) check again before their first game, and refuse it.
            bot.write_text("changed")
            forget = lambda: __import__("tournaments.dask_executor").dask_executor._checked.clear()  # noqa: E731 (runs on the workers, sent by value)
            await trio.to_thread.run_sync(lambda: ex.client.run(forget))
            with pytest.raises(ExecutorSetupError) as info:
                await ex.play(t.game, t.options, t.bots(t.schedule()[0]), seed=1)
            return str(info.value)

    message = trio.run(main)
    assert message.startswith("worker tcp://127.0.0.1:") and f"entrant 'a': {bot} differs" in message


def test_an_executor_setup_error_stops_the_run_as_itself_not_as_a_referee_bug(tmp_path):
    async def refused(*args, **kwargs):
        raise ExecutorSetupError("worker tcp://10.0.0.7:1: entrant 'a': command 'mybot' not found on PATH")

    with pytest.raises(ExecutorSetupError, match="entrant 'a'"):
        trio.run(lambda: run_tournament(tournament(tmp_path / "out"), play=refused))


# ---------------------------------------------------------------------------
# `--dask local:N`: a LocalCluster started by the run itself.


def toml_file(tmp_path: Path) -> Path:
    data = settings(tmp_path / "unused")
    lines = [f'game = "{data["game"]}"', f"seed = {data['seed']}", f"games_per_pairing = {data['games_per_pairing']}",
             "[limits]", "decision_s = 30.0", "handshake_s = 60.0"]
    for e in data["entrants"]:
        lines += ["[[entrants]]", f'name = "{e["name"]}"', f"command = {json.dumps(e['command'])}"]
    path = tmp_path / "t.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def interrupted_run(args: list, ready) -> str:
    """Run ``referee ARGS`` until ``ready()``, then Ctrl-C it (SIGINT to its group, as a
    terminal sends); check it exits 130 and return its stderr."""
    proc = subprocess.Popen([sys.executable, "-m", "referee", *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not ready():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr and proc.stderr.read()
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    return err


@pytest.mark.slow
def test_dask_local_2_equals_a_local_run_and_resumes_after_ctrl_c(local_run, tmp_path):
    local_out, _ = local_run
    toml = toml_file(tmp_path)
    out = tmp_path / "out"
    args = ["run", toml, "--dask", "local:2", "--secret", SECRET.hex(), "--output", out, "-q"]
    err = interrupted_run(args, lambda: count_lines(out / "results.jsonl") >= 1)
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("referee: interrupted;"), err
    kept = count_lines(out / "results.jsonl")
    assert 1 <= kept < GAMES
    res = referee(*args)
    assert res.returncode == 0, res.stderr
    assert "dask local:2, chunks sized from the game time" in res.stderr
    assert f"resuming, {kept} already played" in res.stderr
    assert "Traceback" not in res.stderr
    assert result_lines(out) == result_lines(local_out)
    assert (out / "standings.json").read_bytes() == (local_out / "standings.json").read_bytes()
    same_records(out, local_out)


@pytest.mark.parametrize("address", ["http://10.0.0.1:8786", "tcp://10.0.0.1", "local:0", "local:x"])
def test_a_bad_dask_setting_is_refused_in_one_line(tmp_path, address):
    from tournaments.config import ConfigError

    with pytest.raises(ConfigError, match=r"dask: .*(scheduler address|local:N needs)"):
        parse(settings(tmp_path / "out", dask=address))
    assert "local:N" in one_line_error(referee("worker", "local:2"))


def test_an_unreachable_scheduler_is_refused_in_one_line(tmp_path):
    res = referee("run", "--game", "back-alley", "--entrant", f"a={sys.executable} {RANDOM_BOT}",
                  "--entrant", f"b={sys.executable} {RANDOM_BOT}", "--dask", f"tcp://127.0.0.1:{free_port()}",
                  "--output", tmp_path / "out", "-q")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith("referee: error: cannot reach the Dask scheduler at tcp://")


# ---------------------------------------------------------------------------
# Long-lived bots (protocol version 2): a run's pool of live processes on each worker.

REMEMBERING = ROOT / "tests" / "fixtures" / "remembering_bot.py"
LONG_GAMES = 8  # 2 entrants x 4 deals x 2 seatings


def remembering_copy(tmp_path: Path) -> Path:
    """The remembering bot at a path of this test's own, by which its processes are found."""
    bot = tmp_path / "bots" / "remembering_bot.py"
    bot.parent.mkdir(parents=True, exist_ok=True)
    bot.write_text(REMEMBERING.read_text())
    return bot


def long_lived(out: Path, bot: Path, **overrides):
    entrants = [{"name": n, "command": [sys.executable, str(bot)]} for n in ("a", "b")]
    return tournament(out, entrants=entrants, **{"games_per_pairing": 4, **overrides})


def bot_processes(bot: Path) -> list[int]:
    """Live processes running ``bot`` (a sandbox's bwrap and the bot inside it alike)."""
    import psutil

    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if str(bot) in (p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(p.pid)
        except psutil.Error:
            continue
    return found


def wait_until_none_left(bot: Path, within_s: float = 15.0) -> None:
    deadline = time.monotonic() + within_s
    while (left := bot_processes(bot)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"bot processes outlived the run: {left}"


def test_a_run_folder_of_a_worker_process_that_is_gone_is_removed(tmp_path):
    from tournaments.dask_executor import _sweep_stale_roots

    gone = subprocess.Popen(["true"])
    gone.wait()
    folders = {name: tmp_path / f"referee-run-r1-pid{pid}-x" for name, pid in
               (("gone", gone.pid), ("mine", os.getpid()), ("init", 1))}
    for folder in folders.values():
        (folder / "game-1").mkdir(parents=True)
    (tmp_path / "referee-run-old-style").mkdir()  # no pid in its name: not ours to judge
    _sweep_stale_roots(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [folders["mine"].name, folders["init"].name, "referee-run-old-style"])


def run_folders(cluster: Cluster) -> set[Path]:
    """The folders of runs (``_RunLoop.root``, named ``referee-run-RUN-pidN-*``) of this
    cluster's worker processes: the temporary folder is shared with every other Dask run on
    the machine, another test process's among them (pytest-xdist), which come and go."""
    import tempfile

    with cluster.client() as c:
        pids = {str(pid) for pid in c.run(os.getpid).values()}
    return {p for p in Path(tempfile.gettempdir()).glob("referee-run-*-pid*-*")
            if p.name.rsplit("-pid", 1)[1].split("-", 1)[0] in pids}


def hellos(out: Path) -> dict[int, list[str]]:
    """Game id -> the process ids (the bot's own random ones) that said hello in it, one per seat."""
    import re

    by_game: dict[int, list[str]] = {}
    for game_dir in sorted((out / "stderr").iterdir()):
        text = "".join(p.read_text() for p in game_dir.glob("*.log"))
        by_game[int(game_dir.name)] = re.findall(r"hello pid=(\w+) seat=\d+", text)
    return by_game


def test_long_lived_bots_play_many_games_per_process_on_dask_as_on_local_workers(cluster, tmp_path):
    bot = remembering_copy(tmp_path)
    local = trio.run(lambda: run_tournament(long_lived(tmp_path / "local", bot, jobs=2)))
    out = tmp_path / "out"
    folders_before = run_folders(cluster)
    run = trio.run(lambda: run_tournament(long_lived(out, bot, dask=cluster.address)))
    assert run.played == local.played == LONG_GAMES
    # The run ended its pools on every worker: the workers live on, no bot process does.
    wait_until_none_left(bot)
    assert len(cluster.client().nthreads()) == 2
    assert result_lines(out) == result_lines(tmp_path / "local")
    assert run.standings.to_json() == local.standings.to_json()
    assert all(line["fault"] is None for line in result_lines(out).values())
    seen = hellos(out)
    assert sorted(seen) == list(range(LONG_GAMES))
    assert all(len(pids) == 4 == len(set(pids)) for pids in seen.values())  # a process per seat
    processes = {pid for pids in seen.values() for pid in pids}
    # Never one deal twice in a process: two seatings of each deal need eight processes per
    # worker at most, and reuse makes them fewer than the 32 seats played.
    assert len(processes) <= 16
    assert any(sum(pid in pids for pids in seen.values()) > 1 for pid in processes)
    assert "SEEN TWICE" not in "".join(p.read_text() for p in (out / "stderr").rglob("*.log"))
    # The workers forgot the run, and its temporary folders are gone.
    assert run_folders(cluster) <= folders_before  # none of its own left (stale ones of dead workers may go)
    with cluster.client() as c:
        assert set(c.run(lambda: len(__import__("tournaments.dask_executor").dask_executor._runs)).values()) == {0}


def test_a_stopped_run_leaves_no_bot_process_on_the_workers(cluster, tmp_path):
    bot = remembering_copy(tmp_path)
    out = tmp_path / "out"
    args = ["run", "--game", "back-alley", "--entrant", f"a={sys.executable} {bot}", "--entrant",
            f"b={sys.executable} {bot}", "-n", "4", "--dask", cluster.address, "--output", out, "-q"]
    interrupted_run(args, lambda: count_lines(out / "results.jsonl") >= 1 and bool(bot_processes(bot)))
    assert 1 <= count_lines(out / "results.jsonl") < LONG_GAMES
    wait_until_none_left(bot)
    with cluster.client() as c:
        assert len(c.nthreads()) == 2  # the workers were not what ended them


def test_a_worker_process_that_exits_ends_its_runs_bot_processes(tmp_path):
    # Unsandboxed, and deaf to the end of its input: only the worker's own shutdown ends it.
    bot = remembering_copy(tmp_path)
    bot.write_text(bot.read_text().replace(
        "    sys.exit(main(sys.argv))", "    main(sys.argv)\n    time.sleep(600)  # deaf to end of input"))
    t = long_lived(tmp_path / "out", bot, sandbox="off")
    c = Cluster(tmp_path)
    try:
        worker = c.add_worker()
        c.wait_for_workers(1)
        t = dataclasses.replace(t, dask=c.address)

        async def main():
            async with dask_executor.open_dask_executor(t) as ex:
                result = await ex.play(t.game, t.options, t.bots(t.schedule()[0]), seed=1, limits=t.limits)
                assert result.fault is None
                assert len(bot_processes(bot)) == 4  # kept for the run's next games
                worker.send_signal(signal.SIGTERM)  # `dask worker` closes its worker process
                await trio.to_thread.run_sync(lambda: worker.wait(timeout=60))
                await trio.to_thread.run_sync(wait_until_none_left, bot)

        trio.run(main)
    finally:
        c.close()


def test_a_run_whose_coordinator_was_killed_ends_its_bot_processes_once_idle(cluster, tmp_path):
    bot = remembering_copy(tmp_path)
    out = tmp_path / "out"
    args = ["run", "--game", "back-alley", "--entrant", f"a={sys.executable} {bot}", "--entrant",
            f"b={sys.executable} {bot}", "-n", "4", "--dask", cluster.address, "--output", out, "-q"]
    set_idle = lambda s: setattr(__import__("tournaments.dask_executor").dask_executor, "RUN_IDLE_S", s)  # noqa: E731
    with cluster.client() as c:
        c.run(set_idle, 3.0)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "referee", *map(str, args)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 180
            while count_lines(out / "results.jsonl") < 1 or not bot_processes(bot):
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.01)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # it never tells the workers that its run ended
            proc.wait()
        assert bot_processes(bot)
        wait_until_none_left(bot, within_s=3.0 + 30)  # its games end by their limits, then the pools idle
    finally:
        with cluster.client() as c:
            c.run(set_idle, dask_executor.RUN_IDLE_S)


@pytest.mark.slow
def test_on_one_dask_worker_a_long_lived_bot_needs_a_process_per_seat_and_seating_not_per_game(tmp_path):
    bot = remembering_copy(tmp_path)
    out = tmp_path / "out"
    t = long_lived(out, bot, games_per_pairing=8, dask="local:1")  # 16 games, one at a time
    run = trio.run(lambda: run_tournament(t))
    assert run.played == 16
    seen = hellos(out)
    processes = {pid for pids in seen.values() for pid in pids}
    # Two seatings of a deal cannot share a process: 2 x 4 seats; every later deal reuses them.
    assert len(processes) == 8 < run.played
    assert "SEEN TWICE" not in "".join(p.read_text() for p in (out / "stderr").rglob("*.log"))
    wait_until_none_left(bot)
