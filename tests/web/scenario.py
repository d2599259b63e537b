"""A Redis seeded the honest way: jobs enqueued by a client and worked by a real worker."""

from __future__ import annotations

import attrs
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, wait_for_processes
from tests.support.processes import CogworkerProcess, wait_until
from tests.web import jobs

WEB_APP = "tests.web.jobs:config"
#: Every page without a jid, by the name of its screenshot.
PAGES = {
    "overview": "/",
    "workers": "/workers",
    "queues": "/queues",
    "queue": "/queue?name=parked",
    "scheduled": "/scheduled",
    "retries": "/retries",
    "dead": "/dead",
    "periodic": "/periodic",
    "batches": "/batches",
    "job-metrics": "/job-metrics",
    "limits": "/limits",
    "about": "/about",
    "go-to-jid": "/job",
}


@attrs.frozen(kw_only=True)
class Seeded:
    """The jids of a seeded Redis, by where each job ended up."""

    worker: CogworkerProcess
    identity: str
    done: tuple[str, ...]
    dead: str
    retrying: str
    scheduled: str
    parked: tuple[str, ...]
    running: str
    killed: str
    discarded: str


def seed(workers: Workers, enqueuer: cogworker.Client, rc: redis.Redis) -> Seeded:
    """Start a worker and enqueue one job for every place a job can be; wait until each is there."""
    worker = workers.start(WEB_APP)
    (identity,) = wait_for_processes(rc, 1, worker)
    done = tuple(str(enqueuer.enqueue(jobs.Done, n)) for n in range(3))
    seeded = Seeded(
        worker=worker,
        identity=identity,
        done=done,
        dead=str(enqueuer.enqueue(jobs.FailsUntilAllowed, "dead one")),
        retrying=str(enqueuer.enqueue(jobs.FailsThenRetries, "retry one")),
        scheduled=str(enqueuer.enqueue_in(3600, jobs.Done, "later")),
        parked=tuple(str(enqueuer.enqueue(jobs.Parked, n)) for n in range(2)),
        running=str(enqueuer.enqueue(jobs.Holds, "hold")),
        killed=str(enqueuer.enqueue(jobs.KilledByRetryIn, "kill")),
        discarded=str(enqueuer.enqueue(jobs.DiscardedByRetryIn, "discard")),
    )
    wait_until(
        lambda: settled(rc, seeded),
        20.0,
        message=lambda: f"the seeded jobs never settled; worker log:\n{worker.log_tail()}",
    )
    return seeded


def settled(rc: redis.Redis, seeded: Seeded) -> bool:
    """Whether every seeded job is where it should be."""
    return (
        rc.scard("done") == len(seeded.done)
        and rc.zcard("cogworker:{q:web}:dead") == 2
        and rc.zcard("cogworker:{q:web}:retry") == 1
        and rc.sismember("holding", seeded.running) == 1
        and rc.llen(f"cogworker:{{q:web}}:attempts:{seeded.discarded}") == 1
        and rc.hlen(keys.workers(seeded.identity)) == 1  # a beat saw the running job
    )
