"""The shared run: one worker process and a private Redis for every case that needs no crash.

The package-scoped `shared_runs`, once on a private redis-server and once on the local
cluster, enqueues one job per table row / scope point
(see `helpers.CASES`) for each kind of job class (sync, async), lets one
`cogworker work tests.policy.jobs:shared_config` process settle them all, and
hands the tests an `Observed` per kind to read what landed where, which hooks
ran and what the worker logged.  `shared_run` gives each test one kind after the
other; `shared_run_once` is for what has no kind (the raw payloads).  Each
kind's DISCARD case runs alone first, so the failed counter it bumps can be
read on its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator

import pytest
import redis

import cogworker
from tests.policy import jobs
from tests.policy.helpers import (
    CASES,
    QUEUE_KEY,
    RAW_CASES,
    SHARED_APP,
    UNPARSEABLE,
    Observed,
    counters,
    missing,
    raw_payload,
)
from tests.support.async_variants import KINDS, Kind
from tests.support.processes import start_worker, wait_until
from tests.support.redis_server import RedisServer
from tests.support.topology import TOPOLOGIES, cluster_url, flushed_url, plain_client


@pytest.fixture(scope="package", params=TOPOLOGIES)
def shared_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[Kind, Observed]]:
    """One worker settles every case of both kinds; each kind's DISCARD case alone first.
    Once on a private redis-server, once on the (flushed) local cluster."""
    with contextlib.ExitStack() as stack:
        url = _shared_redis(request, tmp_path_factory, stack)
        yield from _shared_run(url, tmp_path_factory)


def _shared_redis(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    stack: contextlib.ExitStack,
) -> str:
    """The URL of the shared run's Redis on the topology of `request.param`, stopped with
    `stack` if it is the run's own server."""
    if request.param == "cluster":
        return flushed_url(cluster_url(request.getfixturevalue("local_cluster")))
    server = RedisServer(tmp_path_factory.mktemp("policy-redis")).start()
    stack.callback(server.close)
    return server.url


def _shared_run(
    url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[Kind, Observed]]:
    """Start the shared worker on `url`, settle every case, stop it, and yield the runs."""
    rc = plain_client(url)
    client = cogworker.Client(cogworker.Config(redis_url=url))
    worker = start_worker(
        SHARED_APP,
        redis_url=url,
        directory=tmp_path_factory.mktemp("policy-worker"),
        env={jobs.SIDE_EFFECTS_URL_ENV: url},
        name="shared-worker",
    )
    try:
        runs = {kind: Observed(rc=rc, worker=worker, kind=kind) for kind in KINDS}
        for run in runs.values():
            _discard_alone(client, run)
        for run in runs.values():
            for name, (job_class, args) in CASES.items():
                enqueued = client.enqueue(run.job_class(job_class), *args)
                assert enqueued is not None
                run.jids[name] = enqueued
        _push_raw_cases(rc, list(runs.values()))
        every_jid = frozenset(jid for run in runs.values() for jid in run.jids.values())
        for run in runs.values():
            run.every_jid = every_jid
        try:
            wait_until(lambda: not any(missing(run) for run in runs.values()), 60.0, interval=0.1)
        except AssertionError:
            for run in runs.values():
                run.unsettled = "; ".join(missing(run))
        # Stopped, so default-delay retries (16 s+) don't come due and run again mid-package.
        worker.terminate()
        yield runs
    finally:
        worker.close()
        client.close()
        rc.close()


@pytest.fixture(scope="package", params=KINDS)
def shared_run(request: pytest.FixtureRequest, shared_runs: dict[Kind, Observed]) -> Observed:
    """The shared run read for one kind of job class: each test runs for both."""
    return shared_runs[request.param]


@pytest.fixture(scope="package")
def shared_run_once(shared_runs: dict[Kind, Observed]) -> Observed:
    """The shared run read once, for what has no kind: a payload whose class can't be loaded
    or that can't be parsed, and checks over every stored entry."""
    return shared_runs["sync"]  # the raw cases' jids are in every kind's


def _discard_alone(client: cogworker.Client, run: Observed) -> None:
    """Run the kind's DISCARD case with nothing else, noting how far the counters rose."""
    before = counters(run.rc)
    jid = client.enqueue(run.job_class(jobs.Fails), "discard")
    assert jid is not None
    run.jids["discard"] = jid
    wait_until(
        lambda: any("reason=discarded" in line for line in run.log_lines(jid)),
        30.0,
        message=lambda: f"the DISCARD case never settled; log:\n{run.worker.log_tail()}",
    )
    after = counters(run.rc)
    run.discard_counters = (after[0] - before[0], after[1] - before[1])


def _push_raw_cases(rc: redis.Redis, runs: Collection[Observed]) -> None:
    """Push the raw cases (one payload each, shared by every kind) and the unparseable one."""
    for name, (class_name, retry) in RAW_CASES.items():
        jid, payload = raw_payload(class_name, retry)
        for run in runs:
            run.jids[name] = jid
        rc.lpush(QUEUE_KEY, payload)
    rc.lpush(QUEUE_KEY, UNPARSEABLE)
