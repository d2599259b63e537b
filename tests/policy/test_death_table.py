"""Table 2 of the spec ("Death hooks"): how the job died decides which death hooks run.

The rows that need no crash read the shared run (see conftest); the orphaned
row kills worker processes, the "filed later" row stops Redis mid-failure.  Every
row runs for sync and async job classes, but the raw payloads' (they have no kind).
"""

from __future__ import annotations

import json
import time
from typing import Any

import attrs
import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.exceptions import JobFailedError, JobOrphanedError, UnknownJobClassError
from tests.policy import jobs
from tests.policy.helpers import (
    ALL_DEATH_HOOKS,
    DEAD_KEY,
    RETRY_KEY,
    VANISHED,
    Observed,
    delay_of,
    qualified,
)
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer, RedisServerFactory

BOOM = qualified(jobs.PolicyBoomError)
#: The error fields every death hook's copy must share with the stored dead entry.
ENTRY_FIELDS = ("jid", "class", "error_class", "error_message", "retry_count", "failed_at")


def dead_entry(run: Observed, case: str) -> dict[str, Any]:
    """The case's dead entry; fails the test (with context) if it isn't in dead."""
    found = run.entry(DEAD_KEY, run.jids[case])
    assert found is not None, f"{case} is not in dead\n{run.context()}"
    assert run.entry(RETRY_KEY, run.jids[case]) is None
    return found[0]


def assert_hooks_saw(
    calls: list[dict[str, Any]], entry: dict[str, Any], exc_class: str, exc_message: str
) -> None:
    """Each death hook got the entry as stored and (if it takes it) the exception given."""
    for call in calls:
        handed = {k: call["job"].get(k) for k in ENTRY_FIELDS}
        stored = {k: entry.get(k) for k in ENTRY_FIELDS}
        assert handed == stored, f"{call['hook']} wasn't handed the dead entry as stored"
        if call["hook"] != "mutating_handler":  # it takes the job only
            assert (call["exc_class"], call["exc_message"]) == (exc_class, exc_message)


# -- rows read from the shared run ----------------------------------------------------


@pytest.mark.parametrize(
    ("case", "retry_count"), [("budget", 3), ("retry_false", 1), ("retry_zero", 1)]
)
def test_out_of_retries_or_retry_disabled_runs_both(
    shared_run: Observed, case: str, retry_count: int
) -> None:
    """Out of retries, retry=False or retry=0: the class hook, then every handler, in order."""
    entry = dead_entry(shared_run, case)
    message = f"boom: {shared_run.records(shared_run.jids[case])[0]['job']['args'][0]}"
    assert (entry["error_class"], entry["error_message"]) == (BOOM, message)
    assert entry["retry_count"] == retry_count
    assert entry["failed_at"] <= time.time()
    jid = shared_run.jids[case]
    assert shared_run.death_hooks(jid) == list(ALL_DEATH_HOOKS), shared_run.context()
    calls = [c for c in shared_run.records(jid) if c["hook"] in ALL_DEATH_HOOKS]
    assert_hooks_saw(calls, entry, BOOM, message)


def test_kill_runs_both(shared_run: Observed) -> None:
    """KILL: the class hook, then every handler, each with the job's own error."""
    entry = dead_entry(shared_run, "kill")
    jid = shared_run.jids["kill"]
    assert shared_run.death_hooks(jid) == list(ALL_DEATH_HOOKS), shared_run.context()
    calls = [c for c in shared_run.records(jid) if c["hook"] in ALL_DEATH_HOOKS]
    assert_hooks_saw(calls, entry, BOOM, "boom: kill")


def test_a_class_that_cannot_be_loaded_runs_only_the_handlers(shared_run_once: Observed) -> None:
    """A job naming a missing class (retry=False): in dead, only death_handlers run."""
    entry = dead_entry(shared_run_once, "missing_dead")
    assert entry["error_class"] == qualified(UnknownJobClassError)
    assert VANISHED in entry["error_message"]
    jid = shared_run_once.jids["missing_dead"]
    assert shared_run_once.death_hooks(jid) == list(jobs.HANDLER_NAMES), shared_run_once.context()
    calls = [c for c in shared_run_once.records(jid) if c["hook"] in ALL_DEATH_HOOKS]
    assert_hooks_saw(calls, entry, qualified(UnknownJobClassError), entry["error_message"])


def test_discard_runs_none(shared_run: Observed) -> None:
    """DISCARD: no death hook at all, and nothing in dead."""
    jid = shared_run.jids["discard"]
    assert shared_run.entry(DEAD_KEY, jid) is None
    assert shared_run.death_hooks(jid) == []


def test_an_unparseable_payload_runs_none(shared_run_once: Observed) -> None:
    """An unparseable payload is filed in dead (raw text kept) and no hook runs for it."""
    run = shared_run_once
    unparseable = [e for e in run.entries(DEAD_KEY) if e.get("class") == "unparseable_job"]
    assert len(unparseable) == 1, run.context()
    assert unparseable[0]["raw"].startswith('{"class": "tests.policy.jobs.Fails"')
    assert run.records(unparseable[0]["jid"]) == []
    known = run.every_jid | {None}  # None: OneParamJob's retry_in gets no job
    assert {r["jid"] for r in run.records()} <= known


# -- orphaned past max_orphanings ---------------------------------------------------


def _keep_alive(workers: list[CogworkerProcess]) -> None:
    """Start again every worker that has exited (killed by the job), so someone reconciles."""
    for worker in workers:
        if not worker.is_running:
            worker.start()


def _records(rc: redis.Redis, jid: str) -> list[dict[str, Any]]:
    """The recorded hook calls of `jid`, in call order."""
    return [
        r
        for r in (json.loads(line) for line in rc.lrange(jobs.HOOKS_KEY, 0, -1))
        if r["jid"] == jid
    ]


def _dead(rc: redis.Redis, jid: str) -> dict[str, Any] | None:
    """`jid`'s dead entry, or None."""
    for member in rc.zrange(DEAD_KEY, 0, -1):
        entry: dict[str, Any] = json.loads(member)
        if entry.get("jid") == jid:
            return entry
    return None


def _logs(workers: list[CogworkerProcess]) -> str:
    """The tails of the workers' logs, for failure messages."""
    return "\n---\n".join(worker.log_tail(30) for worker in workers)


def test_orphaned_past_max_orphanings_runs_both_once(
    cogworker_factory: CogworkerFactory, redis_url: str, kind: Kind
) -> None:
    """A job that kills its process every time is buried by a survivor; hooks run once, orphaned."""
    env = {jobs.SIDE_EFFECTS_URL_ENV: redis_url}
    workers = [
        cogworker_factory("tests.policy.jobs:orphan_config", redis_url=redis_url, env=env)
        for _ in range(3)
    ]
    rc = redis.Redis.from_url(redis_url, socket_timeout=10.0)
    client = cogworker.Client(cogworker.Config(redis_url=redis_url))
    try:
        wait_until(
            lambda: rc.scard("cogworker:processes") >= 3, 20.0, message=lambda: _logs(workers)
        )
        jid = client.enqueue(of_kind(jobs.OrphanJob, kind))
        assert jid is not None

        def buried_and_notified() -> bool:
            _keep_alive(workers)
            return _dead(rc, jid) is not None and len(_records(rc, jid)) >= len(ALL_DEATH_HOOKS)

        wait_until(buried_and_notified, 60.0, interval=0.1, message=lambda: _logs(workers))
        buried_at = time.time()

        # Give every reconciler (3 live processes) a few more passes to repeat it, if it could.
        _keep_alive(workers)
        wait_until(lambda: rc.scard("cogworker:processes") >= 3, 20.0)
        sentinel = client.enqueue(jobs.Sentinel)
        wait_until(lambda: rc.sismember(jobs.DONE_KEY, sentinel), 20.0)
        wait_until(
            lambda: all(
                float(rc.hget(keys.process(m.decode()), "beat") or 0) > buried_at + 1.5
                for m in rc.smembers("cogworker:processes")
            ),
            20.0,
        )

        entry = _dead(rc, jid)
        assert entry is not None
        assert "JobOrphanedError" in entry["error_class"]
        assert entry["error_message"] == "orphaned more than 1 times"
        assert rc.llen(f"policy:runs:{jid}") == 2  # max_orphanings=1: the 2nd orphaning buries it
        calls = _records(rc, jid)
        assert [c["hook"] for c in calls] == list(ALL_DEATH_HOOKS), _logs(workers)
        for call in calls:
            assert call["in_dead"] is True
            if call["hook"] != "mutating_handler":
                assert call["exc_class"] == qualified(JobOrphanedError)
                assert call["exc_message"] == "orphaned more than 1 times"
        assert_hooks_saw(calls, entry, qualified(JobOrphanedError), "orphaned more than 1 times")
    finally:
        client.close()
        rc.close()


# -- filed later by a reconcile pass ---------------------------------------------------


@attrs.define
class Outage:
    """Jobs that failed while their Redis was stopped, and that Redis (running again)."""

    server: RedisServer
    worker: CogworkerProcess
    jids: list[str]

    def client(self) -> redis.Redis:
        """A new client of the (restarted) server."""
        return self.server.client(socket_timeout=10.0)


def fail_during_an_outage(
    cogworker_factory: CogworkerFactory,
    redis_server_factory: RedisServerFactory,
    *enqueue: tuple[type[cogworker.Job], str],
) -> Outage:
    """Run the jobs until each waits in perform, stop Redis, let them fail, start Redis again.

    Returns once the worker has logged that it will file each failure later
    (its writes failed) and Redis answers again (its data kept: append-only).
    """
    server = redis_server_factory(appendonly=True)
    env = {jobs.SIDE_EFFECTS_URL_ENV: server.url}
    worker = cogworker_factory(
        "tests.policy.jobs:outage_config", redis_url=server.url, concurrency=len(enqueue), env=env
    )
    client = cogworker.Client(cogworker.Config(redis_url=server.url))
    rc = server.client(socket_timeout=10.0)
    try:
        jids = [client.enqueue(job_class, case) for job_class, case in enqueue]
        wait_until(
            lambda: rc.llen(jobs.OUTAGE_STARTED_KEY) == len(enqueue), 20.0, message=worker.log_tail
        )
    finally:
        client.close()
        rc.close()
    server.stop()
    wait_until(
        lambda: worker.log_text().count("will file it later") >= len(enqueue),
        20.0,
        message=worker.log_tail,
    )
    server.start()
    return Outage(server=server, worker=worker, jids=[str(jid) for jid in jids])


def test_a_failure_filed_later_by_a_reconcile_pass_runs_both_with_job_failed_error(
    cogworker_factory: CogworkerFactory, redis_server_factory: RedisServerFactory, kind: Kind
) -> None:
    """Redis gone while a job fails: filed later; hooks get a JobFailedError with its message."""
    outage = fail_during_an_outage(
        cogworker_factory,
        redis_server_factory,
        (of_kind(jobs.OutageJob, kind), "hour"),
        (of_kind(jobs.OutageRetryJob, kind), "hour"),
    )
    dead_jid, retry_jid = outage.jids
    worker = outage.worker
    rc = outage.client()
    try:
        wait_until(
            lambda: (
                _dead(rc, dead_jid) is not None
                and len(_records(rc, dead_jid)) >= len(ALL_DEATH_HOOKS)
            ),
            30.0,
            interval=0.1,
            message=worker.log_tail,
        )

        entry = _dead(rc, dead_jid)
        assert entry is not None
        assert (entry["error_class"], entry["error_message"]) == (BOOM, "boom: outage")
        assert entry["retry_count"] == 1
        calls = _records(rc, dead_jid)
        assert [c["hook"] for c in calls] == list(ALL_DEATH_HOOKS), worker.log_tail()
        for call in calls:
            assert call["in_dead"] is True
            assert call["in_progress"] is False
            assert call["job"]["error_class"] == BOOM  # the original class is in the job
        assert_hooks_saw(calls, entry, qualified(JobFailedError), "boom: outage")
        assert f"an outcome written late: dead jid={dead_jid}" in worker.log_text()

        # Scope point 6: a failure whose recording failed is retried after 30 s x 1,
        # whatever the hook said (it said an hour); no death hook runs for it.
        retry_entry, score = wait_until(
            lambda: _retry(rc, retry_jid), 10.0, message=worker.log_tail
        )
        assert retry_entry["interrupted_count"] == 1
        assert 30.0 <= delay_of(retry_entry, score) < 35.0
        assert not [c for c in _records(rc, retry_jid) if c["hook"] in ALL_DEATH_HOOKS]
    finally:
        rc.close()


def test_a_discard_whose_write_failed_still_lands_nowhere_and_runs_no_hook(
    cogworker_factory: CogworkerFactory, redis_server_factory: RedisServerFactory, kind: Kind
) -> None:
    """DISCARD while Redis is away: settled later, yet in neither retry nor dead, and no hook."""
    outage = fail_during_an_outage(
        cogworker_factory, redis_server_factory, (of_kind(jobs.OutageRetryJob, kind), "discard")
    )
    (jid,) = outage.jids
    worker = outage.worker
    rc = outage.client()
    try:
        # Logged right after the late write, before any death hook could run.
        wait_until(
            lambda: f"an outcome written late: discard jid={jid}" in worker.log_text(),
            30.0,
            message=worker.log_tail,
        )
        assert _retry(rc, jid) is None
        assert _dead(rc, jid) is None, "a discarded job was filed in dead"
        assert int(rc.get("cogworker:{q:default}:stat:failed") or 0) == 1
        assert not [c for c in _records(rc, jid) if c["hook"] in ALL_DEATH_HOOKS]
    finally:
        rc.close()


def _retry(rc: redis.Redis, jid: str) -> tuple[dict[str, Any], float] | None:
    """`jid`'s retry entry and score, or None."""
    for member, score in rc.zrange(RETRY_KEY, 0, -1, withscores=True):
        entry: dict[str, Any] = json.loads(member)
        if entry.get("jid") == jid:
            return entry, score
    return None
