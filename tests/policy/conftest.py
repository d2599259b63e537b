"""The shared run: one worker process and a private Redis for every case that needs no crash.

The package-scoped `shared_run` enqueues one job per table row / scope point
(see `helpers.CASES`), lets one `cogworker work tests.policy.jobs:shared_config`
process settle them all, and hands the tests an `Observed` to read what landed
where, which hooks ran and what the worker logged.  The DISCARD case runs
alone first, so the failed counter it bumps can be read on its own.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import cogworker
from tests.policy import jobs
from tests.policy.helpers import (
    CASES,
    FAILED_KEY,
    PROCESSED_KEY,
    QUEUE_KEY,
    RAW_CASES,
    SHARED_APP,
    UNPARSEABLE,
    Observed,
    missing,
    raw_payload,
)
from tests.support.processes import start_worker, wait_until
from tests.support.redis_server import RedisServer


@pytest.fixture(scope="package")
def shared_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Observed]:
    """One worker settles every case; the DISCARD case alone first."""
    server = RedisServer(tmp_path_factory.mktemp("policy-redis")).start()
    rc = server.client(socket_timeout=10.0)
    client = cogworker.Client(cogworker.Config(redis_url=server.url))
    worker = start_worker(
        SHARED_APP,
        redis_url=server.url,
        directory=tmp_path_factory.mktemp("policy-worker"),
        env={jobs.SIDE_EFFECTS_URL_ENV: server.url},
        name="shared-worker",
    )
    try:
        jid = client.enqueue(jobs.Fails, "discard")
        assert jid is not None
        run = Observed(rc=rc, worker=worker, jids={"discard": jid}, discard_counters=(0, 0))
        wait_until(
            lambda: any("reason=discarded" in line for line in run.log_lines(jid)),
            30.0,
            message=lambda: f"the DISCARD case never settled; log:\n{worker.log_tail()}",
        )
        run.discard_counters = (int(rc.get(FAILED_KEY) or 0), int(rc.get(PROCESSED_KEY) or 0))

        for name, (job_class, args) in CASES.items():
            enqueued = client.enqueue(job_class, *args)
            assert enqueued is not None
            run.jids[name] = enqueued
        for name, (class_name, retry) in RAW_CASES.items():
            run.jids[name], payload = raw_payload(class_name, retry)
            rc.lpush(QUEUE_KEY, payload)
        rc.lpush(QUEUE_KEY, UNPARSEABLE)
        try:
            wait_until(lambda: not missing(run), 60.0, interval=0.1)
        except AssertionError:
            run.unsettled = "; ".join(missing(run))
        # Stopped, so default-delay retries (16 s+) don't come due and run again mid-package.
        worker.terminate()
        yield run
    finally:
        worker.close()
        client.close()
        rc.close()
        server.close()
