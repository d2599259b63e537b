"""`Client.batch`: jobs enqueued as one batch, with callbacks when they have all ended.

::

    with client.batch(on_success=Report, on_complete=Cleanup, args=["nightly"]) as batch:
        for n in range(100):
            batch.enqueue(Resize, n)

A batch opens with its callbacks' payloads (each with a jid fixed by the batch);
each member is registered in the batch (`batch_join`) before it is pushed, and
taken back if its push didn't happen; leaving the `with` block closes it: a
closing event is appended and folded at once (`app/batch_folding.py`), so a
batch whose members all ended already fires now.  An exception inside the
block closes it too, with the members pushed so far (they can't be taken back,
and a batch left open would never report), and propagates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType

import attrs

from cogworker.adapters.batch_events import BID_FIELD
from cogworker.adapters.batch_store import UNFINISHED_TTL, BatchStore
from cogworker.adapters.jid_index import JidIndex
from cogworker.app import testing
from cogworker.app.batch_folding import fold_event
from cogworker.app.job_base import JobBase
from cogworker.app.job_loading import load_job_class
from cogworker.app.job_record import check_args, new_jid
from cogworker.domain import batches, payload, results
from cogworker.domain.job import DEFAULT_QUEUE, JobRecord
from cogworker.domain.json_values import JSON
from cogworker.exceptions import BatchClosedError, ConfigError, UnknownJobClassError

#: A callback: a Job class, or the dotted path a worker imports it by.
CallbackClass = type[JobBase] | str
#: Builds a job's record (class, args, jid) the way the client's enqueue does.
Build = Callable[[type[JobBase], Sequence[JSON], str | None], JobRecord]


def callback_class(given: CallbackClass, role: str) -> type[JobBase]:
    """The Job class a callback names, checked importable by a worker (UnknownJobClassError
    naming it and the `role`, on_success or on_complete, otherwise)."""
    path = given if isinstance(given, str) else getattr(given, "class_path", lambda: "")()
    if not path:
        raise UnknownJobClassError(f"{role}={given!r}: not a cogworker Job class")
    try:
        found = load_job_class(path)
    except UnknownJobClassError as error:
        raise UnknownJobClassError(
            f"{role}={given!r}: a worker can't import it ({error})"
        ) from None
    if not isinstance(given, str) and found is not given:
        raise UnknownJobClassError(f"{role}={given!r}: {path} names another class")
    return found


def checked_callbacks(
    on_success: CallbackClass | None, on_complete: CallbackClass | None, args: Sequence[JSON]
) -> dict[batches.Callback, type[JobBase]]:
    """The callbacks given, each checked importable by a worker, and their `args` checked
    JSON-native (before anything is written).  ConfigError in a testing mode: a batch's
    bookkeeping is in Redis, which those modes don't reach."""
    if testing.current_mode() is not None:
        raise ConfigError("batches need Redis: Client.batch isn't available in a testing mode")
    check_args(args)
    given: dict[batches.Callback, CallbackClass | None] = {
        "success": on_success,
        "complete": on_complete,
    }
    return {name: callback_class(c, f"on_{name}") for name, c in given.items() if c is not None}


def callback_records(
    bid: str,
    build: Build,
    callbacks: Mapping[batches.Callback, type[JobBase]],
    args: Sequence[JSON],
) -> dict[batches.Callback, JobRecord]:
    """Each callback: its class run with (bid, *args), its jid fixed."""
    return {
        name: build(job_class, [bid, *args], batches.callback_jid(bid, name))
        for name, job_class in callbacks.items()
    }


def callback_indexes(records: Iterable[JobRecord], now: float) -> list[JidIndex]:
    """The jid index of each callback keeping its result, written as its batch opens (as an
    enqueue writes a job's): `result()` of its fixed jid then waits for it rather than
    finding nothing until it has run.  It lasts the batch's life unfinished, then as a
    push's (`results.index_ttl_at_push`)."""
    return [
        JidIndex(job.jid, job.queue, results.index_ttl_at_push(keep, now + UNFINISHED_TTL, now))
        for job in records
        if (keep := results.keep_of(job)) is not None
    ]


def closing_queue(payloads: Mapping[batches.Callback, str]) -> str:
    """Where a batch's closing event goes: its first callback's queue (workers of it fold
    it if the closing client died before folding it), else the default queue."""
    for body in payloads.values():
        return payload.decode(body).map(lambda job: job.queue).value_or(DEFAULT_QUEUE)
    return DEFAULT_QUEUE


@attrs.define
class Batch:
    """A batch being filled; use it as a context manager (see the module's docstring)."""

    store: BatchStore
    bid: str
    build: Build
    push: Callable[[JobRecord], str | None]
    #: Pushes many members in as few round trips as the client's `enqueue_many`.
    push_many: Callable[[Sequence[JobRecord]], list[str | None]]
    now: Callable[[], float]
    #: Where its closing event goes (`closing_queue`).
    queue: str
    closed: bool = False

    def enqueue(self, job_class: type[JobBase], *args: JSON, jid: str | None = None) -> str | None:
        """Enqueue a run of `job_class` as a member; its jid, or None if a middleware (or a
        unique lock) stopped it, which then isn't a member.  BatchClosedError once closed."""
        self.check_open(job_class)
        (job,) = self.join([self.build(job_class, args, jid)])
        pushed: str | None = None
        try:
            pushed = self.push(job)
        finally:
            self.pushed([job], [pushed])
        return pushed

    def enqueue_many(
        self, job_class: type[JobBase], args_list: Sequence[Sequence[JSON]]
    ) -> list[str | None]:
        """Enqueue one member per argument list: one round trip to join them all, then the
        pushes as `Client.enqueue_many` sends them; the jids in order (None where stopped)."""
        self.check_open(job_class)
        jobs = self.join([self.build(job_class, args, None) for args in args_list])
        pushed: list[str | None] = [None] * len(jobs)
        try:
            pushed = self.push_many(jobs)
        finally:
            self.pushed(jobs, pushed)
        return pushed

    def check_open(self, job_class: type[JobBase]) -> None:
        """BatchClosedError naming the batch and `job_class` once the batch is closed."""
        if self.closed:
            raise BatchClosedError(
                f"batch {self.bid} is closed: can't enqueue {job_class.__qualname__} into it"
            )

    def join(self, records: Sequence[JobRecord]) -> list[JobRecord]:
        """`records` as members of this batch, registered before their push."""
        jobs = [attrs.evolve(r, extra={**r.extra, BID_FIELD: self.bid}) for r in records]
        if not jobs:
            return jobs
        joined = self.store.join(self.bid, [job.jid for job in jobs])
        if joined != 1:
            state = "closed" if joined == 0 else "unknown (expired?)"
            raise BatchClosedError(
                f"batch {self.bid} is {state}: can't enqueue {jobs[0].class_name} into it"
            )
        return jobs

    def pushed(self, jobs: Sequence[JobRecord], jids: Sequence[str | None]) -> None:
        """After `jobs`' pushes: those that didn't happen (None) are taken back."""
        dropped = [job.jid for job, jid in zip(jobs, jids, strict=True) if jid is None]
        if dropped:
            self.store.leave(self.bid, dropped)

    def close(self) -> None:
        """Close the batch: its members are counted, its callbacks may fire.  Idempotent."""
        if self.closed:
            return
        self.closed = True
        self.store.close(self.bid, self.queue)
        event = batches.event(self.bid, "-", "close").encode()
        fold_event(self.store, event, self.now())
        self.store.done(self.queue, event)

    def __enter__(self) -> Batch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def open_batch(
    store: BatchStore,
    build: Build,
    push: Callable[[JobRecord], str | None],
    push_many: Callable[[Sequence[JobRecord]], list[str | None]],
    now: Callable[[], float],
    callbacks: Mapping[batches.Callback, type[JobBase]],
    args: Sequence[JSON],
) -> Batch:
    """Open a new batch with its callbacks (`checked_callbacks`)."""
    bid = new_jid()
    records = callback_records(bid, build, callbacks, args)
    payloads = {name: payload.encode(job) for name, job in records.items()}
    opened_at = now()
    store.open(bid, payloads, opened_at, callback_indexes(records.values(), opened_at))
    return Batch(store, bid, build, push, push_many, now, closing_queue(payloads))
