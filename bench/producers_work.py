"""The many-producers workload's rules (issue #25 target 4): which clients take part, and why.

A threaded web server enqueues from many request threads through the one
client object its process made at start-up. The workload: THREADS threads
share ONE client of a library and together enqueue N of the harness's
no-op jobs. A library takes part when its client is meant to be shared by
threads; the others are named here with the reason they don't.
"""

from __future__ import annotations

#: Threads sharing the one client.
THREADS = 50

#: Library -> the client shared, and why threads may share it.
SHARED = {
    "cogworker": "one `cogworker.Client` (documented: thread-safe, one per process)",
    "rq": (
        "one `rq.Queue` on one redis-py client (redis-py documents its client as safe to "
        "share between threads; a Queue keeps no per-call state)"
    ),
    "dramatiq": (
        "the global `RedisBroker`, through `actor.send` (its own worker threads send "
        "through the one broker; only Consumers are documented as not thread-safe)"
    ),
    "huey": (
        "the one `RedisHuey` instance, through the task's call (its thread consumer "
        "enqueues through the one instance; the storage is a redis-py pool)"
    ),
    "celery": (
        "the one Celery app, through `task.delay` = `apply_async` (a kombu producer pool, "
        "locked; celery/celery#4480, 'Application is not thread-safe', is about the rpc "
        "result backend, which isn't used here)"
    ),
}

#: Library -> why its client is left out.
NOT_SHARED = dict.fromkeys(
    ("arq", "saq", "taskiq", "streaq"),
    "an asyncio client, bound to one event loop, with no synchronous enqueue: threads "
    "can't share it (its concurrent enqueue is measured from 100 tasks in the I/O-bound "
    "workload)",
)
