"""What a worker process loads: what it runs jobs with, not what other commands and features
need (a worker's memory, issue #25)."""

from __future__ import annotations

import json

import redis

import cogworker
from tests.app.helpers import Workers
from tests.app.jobs import RecordModules
from tests.support.processes import wait_until

#: Each is imported where it is used: the dashboard (`cogworker serve`) and its server and
#: templates; cron parsing and time zones (no periodic job declared); the converter of the
#: cold reads and hand-overs; TOML (no --config); the supervisor (no --processes); the
#: clients and the testing modes (`cogworker.Client`, `AsyncClient`, `testing`... load at
#: first use).
#: (ctypes, loaded only to interrupt a sync job, is not listed: redis-py 8 loads the
#: OpenTelemetry SDK when it is installed, as in this test environment, and that loads it.)
NOT_IN_A_WORKER = (
    "litestar",
    "jinja2",
    "uvicorn",
    "cogworker.app.web",
    "croniter",
    "zoneinfo",
    "cattrs",
    "cogworker.adapters.codec",
    "tomllib",
    "cogworker.app.supervisor",
    "cogworker.app.client",
    "cogworker.app.async_client",
    "cogworker.app.default_clients",
    "cogworker.app.testing",
    "cogworker.testing",
)


def test_a_worker_loads_neither_the_dashboard_nor_cron_nor_the_converter(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """A job run by `cogworker work` on an app with no periodic job sees none of those modules."""
    worker = workers.start()
    jid = client.enqueue(RecordModules)
    listed = wait_until(
        lambda: rc.get(f"modules:{jid}"),
        20.0,
        message=lambda: f"the job never ran; log:\n{worker.log_tail()}",
    )
    loaded = set(json.loads(listed))

    assert "cogworker.app.worker.manager" in loaded  # the list is a worker's
    unwanted = [
        name
        for name in sorted(loaded)
        if any(name == top or name.startswith(f"{top}.") for top in NOT_IN_A_WORKER)
    ]
    assert unwanted == []
