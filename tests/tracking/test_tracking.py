"""Status, attempts, history, live work, stats and memory history, written by real workers.

What a run writes is tested for sync and async job classes (the `kind` fixture).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import jid_index, tracking
from cogworker.adapters import redis_keys as keys
from cogworker.domain import memory
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until
from tests.support.topology_marks import on_both_topologies, single_node_only
from tests.tracking import jobs

pytestmark = on_both_topologies

APP = "tests.tracking.jobs:config"


@pytest.fixture
def worker(cogworker_factory: CogworkerFactory, redis_url: str) -> CogworkerProcess:
    """One running worker on the test's Redis."""
    return cogworker_factory(APP, redis_url=redis_url)


def settled(rc: redis.Redis, jid: str, status: str) -> bool:
    """Whether `jid`'s tracked status is `status` now."""
    return tracking.status(rc, jid) == status


def test_a_tracked_job_goes_queued_then_complete(
    client: cogworker.Client,
    rc: redis.Redis,
    cogworker_factory: CogworkerFactory,
    redis_url: str,
    kind: Kind,
) -> None:
    """queued at enqueue, complete after the run, with an expiry of the configured length;
    kept in its queue's slot, found by its jid index (which a result's waiter passes by:
    the job keeps none) or, the index lost, by asking the queues."""
    jid = client.enqueue(of_kind(jobs.Tracked, kind))
    assert jid is not None
    assert client.status(jid) == "queued"
    assert jid_index.indexed(rc, jid) == "default"
    worker = cogworker_factory(APP, redis_url=redis_url)
    wait_until(lambda: settled(rc, jid, "complete"), 20, message=worker.log_tail)
    ttl = rc.ttl(keys.status("default", jid))
    assert 0 < ttl <= jobs.config.status_expiry
    with pytest.raises(cogworker.ResultNotFoundError):
        client.result(jid, timeout=0)
    rc.delete(keys.jid_index(jid))
    assert client.status(jid) == "complete"
    untracked = client.enqueue(of_kind(jobs.DiesAtOnce, kind))
    assert untracked is not None
    wait_until(lambda: rc.zcard(keys.dead("default")) == 1, 20)
    assert client.status(untracked) is None


def test_a_tracked_job_reads_working_while_it_runs(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, tmp_path: Path, kind: Kind
) -> None:
    """working (stamped with when it started) while it runs, complete once it has."""
    gate = tmp_path / "gate"
    before = time.time()
    jid = client.enqueue(of_kind(jobs.TrackedWaitsForFile, kind), str(gate), "tracked")
    assert jid is not None
    wait_until(lambda: settled(rc, jid, "working"), 20, message=worker.log_tail)
    started = float(rc.hget(keys.status("default", jid), "update_time") or 0)
    assert before <= started <= time.time()
    assert 0 < rc.ttl(keys.status("default", jid)) <= jobs.config.status_expiry
    gate.touch()
    wait_until(lambda: settled(rc, jid, "complete"), 20, message=worker.log_tail)


def test_jobs_failing_at_once_end_in_their_failure_status_never_working(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, kind: Kind
) -> None:
    """A "working" mark written late would hide the final status: every one reads dead."""
    jids = [client.enqueue(of_kind(jobs.Killed, kind)) for _ in range(60)]

    def statuses() -> set[str | None]:
        return {tracking.status(rc, str(jid)) for jid in jids}

    wait_until(lambda: statuses() == {"dead"}, 30, message=lambda: f"{statuses()}")


def test_failures_are_tracked_as_retrying_dead_and_discarded(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, tmp_path: Path, kind: Kind
) -> None:
    """A retried job reads retrying then complete; KILL reads dead; DISCARD reads discarded."""
    flaky = client.enqueue(of_kind(jobs.TrackedFlaky, kind), str(tmp_path / "marker"))
    killed = client.enqueue(of_kind(jobs.Killed, kind))
    discarded = client.enqueue(of_kind(jobs.Discarded, kind))
    assert flaky
    assert killed
    assert discarded
    wait_until(lambda: settled(rc, flaky, "complete"), 20, message=worker.log_tail)
    wait_until(lambda: settled(rc, killed, "dead"), 20, message=worker.log_tail)
    wait_until(lambda: settled(rc, discarded, "discarded"), 20, message=worker.log_tail)
    flaky_runs = tracking.history(rc, flaky)
    assert [run.outcome for run in flaky_runs] == ["success", "retrying"]


def test_attempts_record_each_failure_newest_first(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, tmp_path: Path, kind: Kind
) -> None:
    """The attempts log has the retry timeline's data for retrying, dead, killed and discarded."""
    flaky = client.enqueue(of_kind(jobs.TrackedFlaky, kind), str(tmp_path / "marker"))
    killed = client.enqueue(of_kind(jobs.Killed, kind))
    discarded = client.enqueue(of_kind(jobs.Discarded, kind))
    dead = client.enqueue(of_kind(jobs.DiesAtOnce, kind))
    assert flaky
    assert killed
    assert discarded
    assert dead
    wait_until(lambda: all(tracking.attempts(rc, j) for j in (flaky, killed, discarded, dead)), 20)
    outcomes = {
        jid: [a.outcome for a in tracking.attempts(rc, jid)]
        for jid in (flaky, killed, discarded, dead)
    }
    assert outcomes == {
        flaky: ["retrying"],
        killed: ["killed"],
        discarded: ["discarded"],
        dead: ["dead"],
    }
    attempt = tracking.attempts(rc, killed)[0]
    assert attempt.attempt == 1
    assert attempt.error_class == "ValueError"
    assert attempt.error_message == "killed on purpose"
    assert attempt.failed_at == pytest.approx(time.time(), abs=30)


def test_history_is_kept_per_job_and_per_class_within_its_caps(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, kind: Kind
) -> None:
    """Every run is in its job's history and its class's, each capped, with process and duration."""
    tracked = of_kind(jobs.Tracked, kind)
    jids = [jid for jid in client.enqueue_many(tracked, [[n] for n in range(130)]) if jid]
    wait_until(lambda: all(settled(rc, jid, "complete") for jid in jids), 30)
    run = tracking.history(rc, jids[0])[0]
    assert run.outcome == "success"
    assert run.process in {m.decode() for m in rc.smembers(keys.PROCESSES)}
    assert run.duration >= 0
    assert run.ended_at >= run.started_at
    per_class = tracking.class_history(rc, tracked.class_path(), limit=1000)
    assert len(per_class) == jobs.config.history_per_class
    assert 0 < rc.ttl(keys.history("default", jids[0])) <= jobs.config.history_ttl


def test_live_work_shows_what_runs_and_is_cleaned_when_it_ends(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, tmp_path: Path, kind: Kind
) -> None:
    """The workers hash lists a running job (jid, class, queue, args, run_at), then drops it."""
    gate = tmp_path / "gate"
    jid = client.enqueue(of_kind(jobs.WaitsForFile, kind), str(gate), "seen running")
    identity = wait_until(lambda: next(iter(rc.smembers(keys.PROCESSES)), b"").decode(), 20)

    def running() -> list[dict[str, object]]:
        return list(tracking.running_work(rc, [identity])[identity].values())

    work = wait_until(running, 20)[0]
    assert work["jid"] == jid
    assert work["class"] == of_kind(jobs.WaitsForFile, kind).class_path()
    assert work["queue"] == "default"
    assert work["args"] == [str(gate), "seen running"]
    gate.touch()
    wait_until(lambda: running() == [], 20)


def test_a_crashed_process_leaves_no_live_work_or_memory_history(
    rc: redis.Redis, cogworker_factory: CogworkerFactory, redis_url: str, kind: Kind
) -> None:
    """kill -9 mid-job: the survivor's recovery removes the dead one's live work and memory."""
    victim = cogworker_factory(APP, redis_url=redis_url, queues=["crash"])
    cogworker_factory(APP, redis_url=redis_url)
    wait_until(lambda: rc.scard(keys.PROCESSES) == 2, 20)
    identities = [m.decode() for m in rc.smembers(keys.PROCESSES)]
    (dying,) = [i for i in identities if b"crash" in (rc.hget(keys.process(i), "queues") or b"")]
    wait_until(lambda: rc.exists(keys.memory_history(dying)), 20)
    crash = cogworker.Client(cogworker.Config(redis_url=redis_url))
    kills = of_kind(jobs.KillsProcess, kind)
    crash.push(cogworker.JobRecord(class_name=kills.class_path(), queue="crash", jid="c"))
    wait_until(lambda: victim.returncode is not None, 20)
    wait_until(lambda: rc.scard(keys.PROCESSES) == 1, 30)
    left = [key for key in rc.scan_iter(match="cogworker:*") if dying.encode() in key]
    assert left == []


def test_memory_history_records_the_rss_of_every_beat(
    rc: redis.Redis, worker: CogworkerProcess
) -> None:
    """After a few beats the current slot holds this process's RSS; the key expires in 25 h."""
    identity = wait_until(lambda: next(iter(rc.smembers(keys.PROCESSES)), b"").decode(), 20)
    series = wait_until(
        lambda: tracking.memory_series(rc, [identity], time.time())[identity][-1].kib, 20
    )
    assert series > 10_000  # a Python worker's RSS, in KiB
    samples = tracking.memory_series(rc, [identity], time.time())[identity]
    assert len(samples) == memory.SLOTS
    assert 0 < rc.ttl(keys.memory_history(identity)) <= memory.KEY_TTL
    rss_kb = int(rc.hget(keys.process(identity), "rss_kb") or 0)
    assert samples[-1].kib is not None
    assert samples[-1].kib >= rss_kb * 0.5


def test_stats_count_processed_and_failed_per_day(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, kind: Kind
) -> None:
    """Totals and today's counters match the runs; queues report size, latency and their
    own counters."""
    for _ in range(4):
        client.enqueue(of_kind(jobs.Tracked, kind))
    client.enqueue(of_kind(jobs.DiesAtOnce, kind))
    wait_until(lambda: tracking.totals(rc) == {"processed": 5, "failed": 1}, 20)
    today = tracking.daily_counts(rc, "processed", time.time(), 7)
    assert list(today.values())[-1] == 5
    assert sum(today.values()) == 5
    rc.lpush(
        keys.queue("waiting"),
        cogworker.domain.payload.encode(
            cogworker.JobRecord(
                class_name="x.Y",
                queue="waiting",
                jid="w",
                created_at=0,
                enqueued_at=time.time() - 60,
            )
        ),
    )
    rc.sadd(keys.QUEUES, "waiting")
    loads = {load.name: load for load in tracking.queues(rc, time.time())}
    assert loads["waiting"].size == 1
    assert loads["waiting"].latency == pytest.approx(60, abs=5)
    assert (loads["default"].processed, loads["default"].failed) == (5, 1)
    assert (loads["waiting"].processed, loads["waiting"].failed) == (0, 0)


class CountingConnection(redis.Connection):
    """A real connection that counts the packets it sends (one per round trip)."""

    sent = 0

    def send_packed_command(self, command: object, check_health: bool = True) -> None:
        """Count, then send."""
        CountingConnection.sent += 1
        super().send_packed_command(command, check_health)  # type: ignore[arg-type]


@single_node_only  # counts one server's round trips: a cluster's take one per node
def test_reading_fifty_processes_memory_is_one_round_trip(redis_url: str) -> None:
    """memory_series of 50 identities sends one packet to Redis, and gives 96 slots each."""
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    client.ping()
    identities = [f"host:{n}:x" for n in range(50)]
    CountingConnection.sent = 0
    result = tracking.memory_series(client, identities, time.time())
    assert CountingConnection.sent == 1
    assert set(result) == set(identities)
    assert all(len(series) == memory.SLOTS for series in result.values())


def test_a_plain_job_that_succeeds_at_once_is_only_in_its_class_history(
    client: cogworker.Client, rc: redis.Redis, worker: CogworkerProcess, tmp_path: Path, kind: Kind
) -> None:
    """No per-job key for an untracked job that ran once and well; a retried one gets one."""
    gate = tmp_path / "gate"
    gate.touch()
    waits = of_kind(jobs.WaitsForFile, kind)
    plain = client.enqueue(waits, str(gate), "plain")
    failed = client.enqueue(of_kind(jobs.DiesAtOnce, kind))
    assert plain is not None
    assert failed is not None
    wait_until(lambda: len(tracking.class_history(rc, waits.class_path())) == 1, 20)
    wait_until(lambda: tracking.history(rc, failed), 20)
    assert tracking.history(rc, plain) == []
    assert tracking.class_history(rc, waits.class_path())[0].jid == plain
