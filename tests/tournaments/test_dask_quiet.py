"""The Dask processes of a run wake less for monitoring (``tournaments.config.DASK_QUIET``).

By default an idle scheduler with two workers burns about 19 ms of CPU a second on
its event loop's health check (every 20 ms) and its system monitor (every 0.5 s);
with the settings, about 4 ms (benchmarks/dask_scale.py, part a).  A ``local:N``
cluster applies them to its scheduler and its worker processes, ``referee worker``
passes them to ``dask worker`` through the environment, and a setting the
environment gives already is left alone."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

import dask.config  # noqa: E402

from tournaments import dask_executor  # noqa: E402
from tournaments.config import DASK_QUIET, dask_env_name, dask_quiet_env  # noqa: E402


def test_the_environment_names_are_the_ones_dask_reads(monkeypatch):
    for key in DASK_QUIET:
        monkeypatch.delenv(dask_env_name(key), raising=False)
    read = dask.config.collect_env(dask_quiet_env())
    assert {key: dask.config.get(key, config=read) for key in DASK_QUIET} == DASK_QUIET


def test_a_setting_the_environment_gives_is_left_alone(monkeypatch):
    monkeypatch.setenv("DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL", "20ms")
    assert "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL" not in dask_quiet_env()
    assert "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL" in dask_quiet_env()


def test_a_local_cluster_runs_its_scheduler_and_workers_with_them(monkeypatch):
    for key in DASK_QUIET:
        monkeypatch.delenv(dask_env_name(key), raising=False)
    import distributed

    cluster = dask_executor._local_cluster(1)
    try:
        assert cluster.scheduler.periodic_callbacks["tick"].callback_time == 1000  # ms, not 20
        with distributed.Client(cluster) as client:
            seen = client.run(lambda: {k: dask.config.get(k) for k in DASK_QUIET})
        assert list(seen.values()) == [DASK_QUIET]
    finally:
        cluster.close()
