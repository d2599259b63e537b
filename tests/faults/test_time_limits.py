"""Time limits on real workers: a job looping in Python past its limit fails with
JobTimeoutError (soft) and is retried by its policy; a job stuck in C past limit and grace
is filed as failed (hard) by its process, which exits and is replaced under --processes,
no other job lost or run twice."""

from __future__ import annotations

import collections
import json
import random
import signal
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker import tracking
from cogworker.adapters import redis_keys as keys
from cogworker.app.worker.stopping import HARD_TIMEOUT_EXIT
from tests.faults import jobs, jobs_timeouts, oracle
from tests.faults.conftest import StartWorker, registered, starts_of, stop_all
from tests.support.async_variants import KINDS, Kind, of_kind
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer
from tests.support.topology_marks import on_both_topologies, single_node_only

APP = "tests.faults.jobs_timeouts:config"
#: What a client meets while its Redis restarts.
RESTARTING = (redis.ConnectionError, redis.TimeoutError, cogworker.RedisUnavailableError)


def attempts(inspect: redis.Redis, jid: str) -> list[dict[str, object]]:
    """`jid`'s attempt timeline, newest first."""
    return [json.loads(entry) for entry in inspect.lrange(keys.job_attempts("default", jid), 0, -1)]


@on_both_topologies
def test_a_python_loop_past_its_limit_fails_once_and_is_retried(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """The limit's JobTimeoutError ends the first run (a sync job's thread, an async job's
    task): one failure on the timeline, marked timed out, seen by retry_in, which retries
    it; the retry completes and the worker goes on."""
    worker = start_worker(APP)
    registered(inspect, 1)
    jid = str(client.enqueue(of_kind(jobs_timeouts.LoopsPastLimitOnce, kind)))
    wait_until(lambda: client.status(jid) == "complete", 30, message=worker.log_tail)
    after = str(client.enqueue(jobs.Count, 1))
    wait_until(lambda: after in oracle.finished(oracle_file), 20, message=worker.log_tail)
    stop_all(worker)
    starts, ends = oracle.runs(oracle_file)
    assert (starts[jid], ends[jid]) == (2, 1)
    [failed] = attempts(inspect, jid)
    assert failed["error_class"] == "cogworker.exceptions.JobTimeoutError"
    assert "time limit (0.5s)" in str(failed["error_message"])
    assert (failed["outcome"], failed["timed_out"]) == ("retrying", "soft")
    assert inspect.lrange("retry-in-saw", 0, -1) == [b"JobTimeoutError"]
    runs = [json.loads(entry) for entry in inspect.lrange(keys.history("default", jid), 0, -1)]
    assert [(run["outcome"], run.get("timed_out")) for run in runs] == [
        ("success", None),
        ("retrying", "soft"),
    ]
    assert inspect.get(keys.stat("default", "failed")) == b"1"
    [record] = tracking.attempts(inspect, jid)  # as the dashboard reads it
    assert record.timed_out == "soft"
    assert [run.timed_out for run in tracking.history(inspect, jid)] == [None, "soft"]
    oracle.assert_nothing_left_behind(inspect)


@on_both_topologies
def test_retry_in_may_kill_a_run_at_its_limit(
    start_worker: StartWorker, client: cogworker.Client, inspect: redis.Redis, kind: Kind
) -> None:
    """retry_in is handed the JobTimeoutError and may KILL it: dead at once, killed on its
    timeline (timed out), its death hook handed the JobTimeoutError."""
    worker = start_worker(APP)
    registered(inspect, 1)
    jid = str(client.enqueue(of_kind(jobs_timeouts.KilledAtLimit, kind)))
    wait_until(lambda: client.status(jid) == "dead", 30, message=worker.log_tail)
    wait_until(lambda: inspect.llen("died-of") == 1, 20, message=worker.log_tail)
    stop_all(worker)
    [failed] = attempts(inspect, jid)
    assert (failed["outcome"], failed["timed_out"]) == ("killed", "soft")
    assert inspect.lrange("died-of", 0, -1) == [b"JobTimeoutError"]
    assert inspect.zcard(keys.dead("default")) == 1
    oracle.assert_nothing_left_behind(inspect)


def start_pids(oracle_file: Path, jid: str) -> list[str]:
    """The pids of the processes `jid` started in, in order."""
    lines = oracle_file.read_text().split("\n")[:-1]
    return [pid for event, seen, pid in map(str.split, lines) if (event, seen) == ("start", jid)]


@pytest.mark.parametrize(
    "stuck",
    [
        jobs_timeouts.SleepsInCOnce,
        jobs_timeouts.ReadsSocketOnce,
        of_kind(jobs_timeouts.SleepsInCOnce, "async"),  # blocking its event loop
    ],
)
@on_both_topologies
def test_a_job_stuck_in_c_is_filed_and_its_process_replaced(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    stuck: type[cogworker.Job],
) -> None:
    """Blocked in C (a sleep, a socket read; an async job blocking its loop) past limit and
    grace: its process files the
    failure (timed out, hard; retry_in retries it), lets its other jobs finish, exits with
    its own status, and the supervisor starts a fresh one, where the retry completes; every
    other job runs exactly once."""
    supervisor = start_worker(APP, extra_args=["--processes", "2"])
    registered(inspect, 2)
    jid = str(client.enqueue(stuck))
    others = [str(j) for j in client.enqueue_many(jobs_timeouts.Naps, [[0.2]] * 30)]
    wait_until(lambda: client.status(jid) == "complete", 60, message=supervisor.log_tail)
    wait_until(
        lambda: all(client.status(other) == "complete" for other in others),
        60,
        message=supervisor.log_tail,
    )
    wait_until(
        lambda: supervisor.log_text().count("supervisor: worker process") >= 4,
        30,
        message=supervisor.log_tail,
    )  # two started, one exited, a fresh one started
    stop_all(supervisor)
    first, second = start_pids(oracle_file, jid)
    assert first != second  # not in the process it was stuck in
    [failed] = attempts(inspect, jid)
    assert (failed["outcome"], failed["timed_out"]) == ("retrying", "hard")
    assert inspect.lrange("retry-in-saw", 0, -1) == [b"JobTimeoutError"]
    starts, ends = oracle.runs(oracle_file)
    assert all((starts[other], ends[other]) == (1, 1) for other in others)
    log = supervisor.log_text()
    assert f"exit code {HARD_TIMEOUT_EXIT}" in log
    assert log.count("supervisor: worker process") >= 4
    oracle.assert_nothing_left_behind(inspect)


@single_node_only  # the pulse's path is the same on a cluster; one topology keeps it cheap
def test_a_job_holding_the_gil_past_its_limit_is_ended_by_the_pulse(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
) -> None:
    """A job holding the GIL in C (libc sleep through ctypes.PyDLL) freezes its process,
    watchdog included: past limit and grace, the pulse kills the process and marks the
    run; the next worker files that run as timed out (hard; retry_in retries it) rather
    than running it as an orphan, recovers the process's other job as an orphan, and both
    complete there: the frozen run is never acknowledged."""
    frozen = start_worker(APP)
    registered(inspect, 1)
    other = str(client.enqueue(jobs_timeouts.Naps, 3))
    wait_until(lambda: starts_of(oracle_file, other) == 1, 20, message=frozen.log_tail)
    jid = str(client.enqueue(of_kind(jobs_timeouts.FreezesInCOnce, kind)))
    assert frozen.wait_for_exit(jobs_timeouts.FREEZE_SECONDS - 5) == -signal.SIGKILL
    assert "frozen past the hard time limit of job" in frozen.log_text()
    fresh = start_worker(APP)
    for done in (jid, other):
        wait_until(lambda done=done: client.status(done) == "complete", 60, message=fresh.log_tail)
    stop_all(fresh)
    assert start_pids(oracle_file, jid)[0] != start_pids(oracle_file, jid)[1]
    [failed] = attempts(inspect, jid)
    assert (failed["outcome"], failed["timed_out"]) == ("retrying", "hard")
    assert failed["error_class"] == "cogworker.exceptions.JobTimeoutError"
    assert inspect.lrange("retry-in-saw", 0, -1) == [b"JobTimeoutError"]
    starts, ends = oracle.runs(oracle_file)
    assert (starts[jid], ends[jid]) == (2, 1)
    assert (starts[other], ends[other]) == (2, 1)  # recovered as after any kill -9
    assert attempts(inspect, other) == []
    oracle.assert_nothing_left_behind(inspect)


#: (pause_at, end_at, raises) of `EndsNearItsHardLimit` runs: raising as its writes pause,
#: before its limit; filed by the watchdog at its hard deadline (1.5 s) with its writes
#: paused, ending on its own after; ending on its own just at its hard deadline.
NEAR_THE_HARD_LIMIT = {
    "raises-at-0.8s": (0.8, 0.8, True),
    "filed-at-1.5s-ends-at-2s": (1.45, 2.0, True),
    "ends-at-1.5s": (1.45, 1.5, False),
}


def logs(workers: list[CogworkerProcess]) -> Callable[[], str]:
    """The tails of the `workers`' logs, for a failure's message."""
    return lambda: "\n".join(worker.log_tail() for worker in workers)


@single_node_only  # it pauses its server's writes (CLIENT PAUSE)
@pytest.mark.parametrize("variant", list(NEAR_THE_HARD_LIMIT))
def test_a_hard_limit_firing_while_the_run_settles_records_one_outcome(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    kind: Kind,
    variant: str,
) -> None:
    """Redis's writes paused for 2.5 s (by the job, CLIENT PAUSE WRITE) as a run near its
    hard limit settles (limit 1 s, grace 0.5 s), two workers up: its own settlement and
    the watchdog's filing meet, and one wins (the claim in the process, the settle
    script's check of the in-progress list in Redis): the job starts once and has one
    outcome (dead or complete, one entry on its timeline if it failed), counted once;
    a worker goes on."""
    workers = [start_worker("tests.faults.jobs_timeouts:settling_config") for _ in range(2)]
    registered(inspect, 2)
    job_class = of_kind(jobs_timeouts.EndsNearItsHardLimit, kind)
    jid = str(client.enqueue(job_class, *NEAR_THE_HARD_LIMIT[variant]))
    wait_until(lambda: client.status(jid) in ("dead", "complete"), 60, message=logs(workers))
    # One may exit after a hard timeout: the other goes on, and recovers what was left.
    after = str(client.enqueue(jobs.Count, 1))
    wait_until(lambda: after in oracle.finished(oracle_file), 30, message=logs(workers))
    for worker in workers:
        if "stuck past its time limit" in worker.log_text():
            assert worker.wait_for_exit(30) == HARD_TIMEOUT_EXIT
    stop_all(*workers)
    status = client.status(jid)
    timeline = attempts(inspect, jid)
    assert oracle.runs(oracle_file)[0][jid] == 1
    assert len(timeline) == (status == "dead"), timeline
    assert inspect.zcard(keys.dead("default")) == (status == "dead")
    assert inspect.zcard(keys.retry("default")) == 0
    assert inspect.get(keys.stat("default", "processed")) == b"2"  # the job and Count
    assert int(inspect.get(keys.stat("default", "failed")) or 0) == (status == "dead")
    oracle.assert_nothing_left_behind(inspect)


#: The classes the mixed run draws from, and the most runs each may have.
MIXED = {
    jobs_timeouts.Naps: 1,
    jobs_timeouts.NapsWithin: 2,
    jobs_timeouts.NapsWithinLonger: 2,
    jobs_timeouts.NapsWithinAndDies: 1,
}
ENDS = {"complete", "dead", "cancelled", "expired"}


def statuses_of(inspect: redis.Redis, jids: Iterable[str]) -> dict[str, str | None]:
    """The tracked status of each of `jids` (None: none)."""
    pipe = inspect.pipeline(transaction=False)
    for jid in jids:
        pipe.hget(keys.status("default", jid), "status")
    return {
        jid: None if raw is None else raw.decode()
        for jid, raw in zip(jids, pipe.execute(), strict=True)
    }


def test_a_thousand_jobs_with_limits_cancels_and_expiries_each_end_once(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
) -> None:
    """1,000 short jobs, sync and async, of random limits (none, 0.1 to 0.3 s, retried or
    not), some expiring soon, a tenth cancelled at random moments, across two processes:
    each ends exactly once (complete, dead, cancelled or expired), and its timeline records
    each of its runs exactly once."""
    rng = random.Random(20)
    workers = [start_worker(APP), start_worker(APP)]
    registered(inspect, 2)
    jids: dict[str, type[cogworker.Job]] = {}
    for batch in range(20):
        job_class = rng.choice(list(MIXED))
        naps = [[round(rng.uniform(0, 0.25), 3)] for _ in range(50)]
        expiry = 0.5 if batch % 5 == 4 else None
        variant = of_kind(job_class, rng.choice(KINDS))
        for jid in client.enqueue_many(variant, naps, expires_in=expiry):
            jids[str(jid)] = job_class
        for jid in rng.sample(list(jids), 5):
            client.cancel(jid)
    for jid in rng.sample(list(jids), 50):
        client.cancel(jid)

    def unfinished() -> dict[str, str | None]:
        statuses = statuses_of(inspect, jids)
        return {jid: status for jid, status in statuses.items() if status not in ENDS}

    wait_until(lambda: not unfinished(), 240, message=lambda: str(unfinished())[:2000])
    stop_all(*workers)
    statuses = statuses_of(inspect, jids)
    starts, ends = oracle.runs(oracle_file)
    for jid, job_class in jids.items():
        assert starts[jid] <= MIXED[job_class]
        assert_recorded_once(attempts(inspect, jid), statuses[jid], starts[jid], ends[jid])
    counted = collections.Counter(statuses.values())
    assert counted["complete"] > 0
    assert counted["dead"] > 0
    assert counted["cancelled"] > 0
    for outcome in ("cancelled", "expired"):
        assert int(inspect.get(keys.stat("default", outcome)) or 0) == counted[outcome]
    assert inspect.zcard(keys.dead("default")) == counted["dead"]
    assert inspect.zcard(keys.retry("default")) == inspect.zcard(keys.schedule("default")) == 0
    oracle.assert_nothing_left_behind(inspect)


CANCELLED = "cogworker.exceptions.JobCancelledError"


def assert_recorded_once(
    timeline: list[dict[str, object]], status: str | None, starts: int, ends: int
) -> None:
    """Each run of a job is on its timeline once (but a successful last one), plus one
    entry for an end without a run (cancelled while waiting, expired at its fetch); a run
    timed out says so.  A cancel that meets a run as its perform starts (after its fetch,
    before the job's first line, which counts its start) ends that run unstarted: one entry
    more than the starts counted, and the only cancel on the timeline."""
    unrun_end = bool(timeline) and timeline[0]["error_class"] == ""
    expected = starts + unrun_end - (status == "complete")
    cancels = [entry for entry in timeline if entry["error_class"] == CANCELLED]
    cut_at_start = status == "cancelled" and len(cancels) == 1 and timeline[0] is cancels[0]
    assert len(timeline) in (expected, expected + cut_at_start), (status, starts, timeline)
    if status == "complete":
        assert ends >= 1
    for attempt in timeline:
        timed = attempt["error_class"] == "cogworker.exceptions.JobTimeoutError"
        assert attempt.get("timed_out") == ("soft" if timed else None)


def test_a_kill_during_a_hard_timeout_exit_loses_nothing(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
) -> None:
    """kill -9 while the process drains after a hard timeout: the stuck job's failure is
    already filed (retried once, never recovered as an orphan too); the job it was still
    draining is recovered as an orphan by the next worker and completes."""
    worker = start_worker(APP)
    registered(inspect, 1)
    draining = str(client.enqueue(jobs_timeouts.Naps, 3))
    wait_until(lambda: starts_of(oracle_file, draining) == 1, 20, message=worker.log_tail)
    stuck = str(client.enqueue(jobs_timeouts.SleepsInCOnce))
    wait_until(
        lambda: "stopping: running jobs get" in worker.log_text(), 30, message=worker.log_tail
    )
    worker.kill()
    [failed] = attempts(inspect, stuck)
    assert (failed["outcome"], failed["timed_out"]) == ("retrying", "hard")
    fresh = start_worker(APP)
    for jid in (stuck, draining):
        wait_until(lambda jid=jid: client.status(jid) == "complete", 60, message=fresh.log_tail)
    stop_all(fresh)
    starts, ends = oracle.runs(oracle_file)
    assert (starts[stuck], ends[stuck]) == (2, 1)
    assert (starts[draining], ends[draining]) == (2, 1)  # killed once, then recovered
    assert len(attempts(inspect, stuck)) == 1
    oracle.assert_nothing_left_behind(inspect)


# Its final write keeps trying for a bounded time, which a busy machine can use up.
@pytest.mark.solo
def test_a_hard_timeout_while_redis_is_away_hands_its_failure_over(
    start_worker: StartWorker,
    client: cogworker.Client,
    inspect: redis.Redis,
    oracle_file: Path,
    server: RedisServer,
    tmp_path: Path,
) -> None:
    """Redis stopped as a job gets stuck: its process can't write the failure, keeps it,
    and stops only once its final writes (as at any shutdown) have filed it; the retry then
    runs once, in a fresh worker."""
    worker = start_worker(APP)
    registered(inspect, 1)
    gate = tmp_path / "gate"
    jid = str(client.enqueue(jobs_timeouts.StuckAfterGate, str(gate)))
    wait_until(lambda: starts_of(oracle_file, jid) == 1, 20, message=worker.log_tail)
    server.stop()
    gate.touch()
    wait_until(lambda: "will file it later" in worker.log_text(), 30, message=worker.log_tail)
    assert worker.is_running  # it doesn't exit with its outcome unwritten
    server.restart()
    assert worker.wait_for_exit(60) == HARD_TIMEOUT_EXIT, worker.log_tail()
    [failed] = attempts(inspect, jid)
    assert (failed["outcome"], failed["timed_out"]) == ("retrying", "hard")
    fresh = start_worker(APP)
    wait_until(
        lambda: client.status(jid) == "complete", 60, ignore=RESTARTING, message=fresh.log_tail
    )
    stop_all(fresh)
    assert oracle.runs(oracle_file)[0][jid] == 2
    oracle.assert_nothing_left_behind(inspect)
