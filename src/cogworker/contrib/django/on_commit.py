"""`enqueue_on_commit`: a job pushed when the database transaction commits, never before.

A job enqueued inside `transaction.atomic()` goes to Redis at once: a
worker can run it before the rows it needs are committed (it finds
nothing, or the old values), and it runs even if the transaction rolls
back.  Pushing from `transaction.on_commit` instead is the whole fix.
"""

from __future__ import annotations

import functools
import time

from django.db import transaction

from cogworker.app.default_clients import default_client
from cogworker.app.job import Job
from cogworker.app.job_record import build_job
from cogworker.domain.json_values import JSON


def enqueue_on_commit(
    job_class: type[Job], *args: JSON, jid: str | None = None, using: str | None = None
) -> str:
    """Enqueue a run of `job_class` once the transaction of database `using` commits;
    the jid it will have.

    The job is built now, so bad arguments raise here, inside the
    transaction, and the jid is known at once; it is pushed (through the
    client `cogworker.configure` set up, its middleware and testing modes)
    when the outermost `atomic()` block commits, at once in autocommit,
    and never if the transaction rolls back.  An `EnqueueError` at the
    commit comes out of the `atomic()` block, after the rows are
    committed: pass your own `jid` to make repeating the enqueue safe.
    """
    client = default_client()
    # Created at the call, on this host's clock; the times that order jobs (enqueued,
    # due) are stamped at the push, by the client, on Redis's clock.
    job = build_job(job_class, args, time.time(), lock_ttl=client.config.unique_lock_ttl, jid=jid)
    transaction.on_commit(functools.partial(client.push, job), using=using)
    return job.jid
