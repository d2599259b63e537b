"""The job and History pages read attempts and runs as typed records; one that doesn't read
as its record is left out, and the rest are shown."""

from __future__ import annotations

import json

import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jid_index import JidIndex
from cogworker.domain.records import AttemptRecord, RunRecord, to_json
from tests.web.helpers import Web

JID = "recorded01"
#: Records that aren't theirs: a wrong type, a missing field, not an object, not JSON.
DAMAGED = [
    json.dumps({"attempt": "two", "failed_at": 1.7e9, "error_class": "E", "error_message": "m",
                "outcome": "retrying"}),
    json.dumps({"jid": JID, "outcome": "success"}),
    "[1, 2]",
    b"\xff{not json",
]  # fmt: skip


def test_damaged_attempts_and_runs_are_left_out_and_the_rest_shown(
    web: Web, raw: redis.Redis
) -> None:
    """A damaged attempt or run beside a good one: both pages answer 200 with the good one."""
    attempt = AttemptRecord(
        attempt=1, failed_at=1.7e9, error_class="TimeoutError", error_message="slow upstream",
        outcome="retrying",
    )  # fmt: skip
    run = RunRecord(
        jid=JID, class_name="app.Sync", queue="q", started_at=1.7e9, ended_at=1.7e9 + 90,
        outcome="retrying", process="host:1:abc", error="TimeoutError: slow upstream",
    )  # fmt: skip
    raw.set(keys.jid_index(JID), JidIndex(JID, "q", 600, records_only=True).value)
    raw.rpush(keys.job_attempts("q", JID), *DAMAGED, to_json(attempt))
    raw.rpush(keys.history("q", JID), *DAMAGED, to_json(run))

    job = web.get("/job", params={"jid": JID})
    assert job.status_code == 200
    assert "Attempt 1 · failed" in job.text
    assert "slow upstream" in job.text
    assert "Attempt two" not in job.text

    history = web.get("/history", params={"jid": JID})
    assert history.status_code == 200
    assert history.text.count("<tr>") == 2  # the header and the one good run
    assert "1 min" in history.text  # its duration, from its start and end
    assert "host:1:abc" in history.text
