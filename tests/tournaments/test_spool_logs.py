"""A Dask worker's spool keeps the stderr log a kept bot writes to, however long it idles.

A long-lived bot writes what it prints between games to its last game's log
(``referee.match.bot``).  The worker keeps the logs of its last three fetched
chunks and, beyond those, the logs its pool's processes write to now
(``ProcessPool.stderr_paths``): what such a process prints after idling for
more chunks than that still reaches the coordinator with a later fetch, a log
the process begins only after its chunk was fetched too, and a log is removed
once no process writes to it and all of it was sent.  ``fetch_spool`` runs here
on a stand-in for the run's game loop: its pool is a set of paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tournaments import dask_executor as d


class Loop:
    """What ``fetch_spool`` asks of a run's loop: its folder, and its processes' logs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.live: set[Path] = set()

    def stderr_paths(self) -> set[Path]:
        return set(self.live)

    def end_processes(self) -> None:
        self.live.clear()


@pytest.fixture
def loop(tmp_path):
    run = "spool-test"
    loop = Loop(tmp_path)
    d._runs[run] = loop  # type: ignore[assignment]
    try:
        yield run, loop
    finally:
        d._runs.pop(run, None)
        for table in (d._sent, d._fetched, d._trimmed):
            table.pop(run, None)


def played(loop: Loop, n: int, logs: dict[str, str]) -> str:
    """Chunk ``n``'s spool as a worker leaves it: one game, its record and stderr logs."""
    game = loop.root / "spool" / f"chunk{n}-ab12" / "0"
    (game / "stderr").mkdir(parents=True)
    (game / "record.jsonl").write_text("{}\n")
    for name, text in logs.items():
        (game / "stderr" / name).write_text(text)
    return game.parent.name


def fetch(run: str, spool: str) -> dict[str, tuple[int, bytes]]:
    """Every piece of one fetch (following the cursor), as the coordinator writes them:
    by file, the offset it starts at and the bytes."""
    got: dict[str, tuple[int, bytes]] = {}
    cursor: tuple[int, int] | None = (0, 0)
    while cursor is not None:
        reply = d.fetch_spool(run, spool, cursor, limit=64)
        assert "error" not in reply, reply
        for path, offset, data in reply["pieces"]:
            start, before = got.get(path, (offset, b""))
            assert offset == start + len(before), (path, offset)
            got[path] = (start, before + data)
        cursor = reply["cursor"]
    return got


def test_a_kept_bot_idle_for_many_chunks_still_gets_its_stderr_to_the_coordinator(loop):
    run, here = loop
    first = played(here, 0, {"a.log": "in game 0\n"})
    idle_log = here.root / "spool" / first / "0" / "stderr" / "a.log"
    here.live = {idle_log}  # a kept process whose last game was chunk 0's
    assert fetch(run, first) == {f"{first}/0/record.jsonl": (0, b"{}\n"),
                                 f"{first}/0/stderr/a.log": (0, b"in game 0\n")}
    late = here.root / "spool" / "chunk1-ab12" / "0" / "stderr" / "b.log"
    for n in range(1, 2 * d.KEPT_SPOOLS + 2):
        name = played(here, n, {"c.log": f"in game {n}\n"})
        if n == 1:
            here.live.add(late)  # kept after a game in which it wrote nothing: no log yet
        assert set(fetch(run, name)) == {f"{name}/0/record.jsonl", f"{name}/0/stderr/c.log"}
    assert not (here.root / "spool" / "chunk1-ab12" / "0" / "stderr" / "c.log").exists()  # trimmed
    with idle_log.open("a") as f:  # between games, many chunks later
        f.write("idle at last\n")
    late.write_text("begun after its fetch\n")
    name = played(here, 20, {})
    got = fetch(run, name)
    assert got[f"{first}/0/stderr/a.log"] == (len("in game 0\n"), b"idle at last\n")  # after what was sent
    assert got["chunk1-ab12/0/stderr/b.log"] == (0, b"begun after its fetch\n")
    later = played(here, 21, {})
    assert fetch(run, later) == {f"{later}/0/record.jsonl": (0, b"{}\n")}  # sent once, not again

    here.live = set()  # the processes moved on (or ended): once all was sent, their logs go
    fetch(run, played(here, 22, {}))
    assert not (here.root / "spool" / first).exists()
    assert not (here.root / "spool" / "chunk1-ab12").exists()


def test_what_a_kept_bot_writes_as_the_run_ends_comes_with_the_last_sweep(loop):
    run, here = loop
    names = [played(here, n, {"a.log": ""}) for n in range(d.KEPT_SPOOLS + 2)]
    log = here.root / "spool" / names[0] / "0" / "stderr" / "a.log"
    here.live = {log}
    for name in names:
        fetch(run, name)
    assert log.exists()
    log.write_text("goodbye\n")  # as its process is ended by the sweep
    assert fetch(run, "") == {f"{names[0]}/0/stderr/a.log": (0, b"goodbye\n")}
