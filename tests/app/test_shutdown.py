"""SIGTERM while jobs run: what finishes in time is done, what doesn't is back on its queue."""

from __future__ import annotations

import concurrent.futures
import signal
import threading
import time

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, logs, queue_payloads, wait_for_processes
from tests.app.jobs import Record, Sleeper
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies


def test_sigterm_lets_short_jobs_finish_and_requeues_long_ones_once(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """On SIGTERM (shutdown_timeout 2 s) a 1.5 s job completes, a 60 s job is back on its queue
    exactly once, and the process's presence keys are gone."""
    worker = workers.start(concurrency=4)
    [identity] = wait_for_processes(rc, 1, worker)
    short = client.enqueue(Sleeper, 1.5)
    long = client.enqueue(Sleeper, 60.0)
    assert short is not None
    assert long is not None
    wait_until(
        lambda: rc.smembers("started") == {short.encode(), long.encode()},
        15.0,
        message=lambda: f"the jobs never started; log:\n{worker.log_tail()}",
    )

    worker.send_signal(signal.SIGTERM)

    assert worker.wait_for_exit(15.0) == 0
    assert rc.smembers("finished") == {short.encode()}
    queued = queue_payloads(rc, "default")
    assert [job["jid"] for job in queued] == [long]
    assert queued[0]["args"] == [60.0]
    assert queued[0]["class"] == Sleeper.class_path()
    assert rc.llen(keys.queue("default")) == 1
    assert rc.zcard("cogworker:{q:default}:dead") == 0
    assert rc.zcard("cogworker:{q:default}:retry") == 0
    assert not rc.exists(keys.process(identity))
    assert not rc.sismember("cogworker:processes", identity)
    assert not rc.exists(f"cogworker:{{q:default}}:inprogress:{identity}")
    assert int(rc.get("cogworker:{q:default}:stat:processed") or 0) == 1, logs(worker)


def enqueue_until_after_exit(client: cogworker.Client, exited: threading.Event) -> list[str]:
    """Enqueue a job every 10 ms until 10 more went in after `exited` was set; their jids."""
    pushed: list[str] = []
    after_exit = 0
    while after_exit < 10:
        jid = client.enqueue(Record, "during shutdown")
        if jid is not None:
            pushed.append(jid)
        after_exit += exited.is_set()
        time.sleep(0.01)
    return pushed


def stop_while_enqueueing(
    rc: redis.Redis, client: cogworker.Client, worker: CogworkerProcess
) -> list[str]:
    """SIGTERM `worker` while jobs keep being enqueued (before, during, after); their jids."""
    exited = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pushing = pool.submit(enqueue_until_after_exit, client, exited)
        try:
            wait_until(lambda: rc.scard("done") >= 5, 10.0, message=worker.log_tail)
            worker.send_signal(signal.SIGTERM)
            assert worker.wait_for_exit(15.0) == 0
        finally:
            exited.set()
        return pushing.result(timeout=10.0)


def test_jobs_enqueued_while_an_idle_worker_stops_are_never_stranded(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """Jobs enqueued while an idle worker stops on SIGTERM all end up run or on their queue,
    never on the in-progress list of the process that has gone (5 tries)."""
    for _attempt in range(5):
        rc.flushall()
        worker = workers.start(concurrency=2)
        [identity] = wait_for_processes(rc, 1, worker)

        pushed = stop_while_enqueueing(rc, client, worker)

        stranded = {
            key.decode(): rc.lrange(key, 0, -1)
            for key in rc.scan_iter(match="cogworker:{q:*}:inprogress:*")
        }
        assert stranded == {}, (
            f"jobs left on the list of {identity}, gone: {stranded}; log:\n{worker.log_tail(8)}"
        )
        queued = {job["jid"] for job in queue_payloads(rc, "default")}
        done = {jid.decode() for jid in rc.smembers("done")}
        assert queued | done == set(pushed)
        assert not queued & done
