"""`PushBatch`: the jobs of one write, sorted by how each is pushed, and what the
replies say was pushed.  Both clients (`Client`, `AsyncClient`) write through it:
they differ only in how they send."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from cogworker.adapters import job_records
from cogworker.adapters.jid_index import JidIndex
from cogworker.adapters.jobs.enqueue import UniquePush
from cogworker.app.config import Config
from cogworker.domain import payload, queues, results, unique
from cogworker.domain.job import JobRecord
from cogworker.domain.status import is_tracked


@attrs.define
class PushBatch:
    """Jobs sorted by how they are pushed: onto queues, scheduled, or unique (lock first)."""

    #: Every job's jid, in order.
    jids: list[str] = attrs.field(factory=list)
    #: The jids whose status is tracked (marked `queued` when pushed), and their queues.
    tracked: dict[str, str] = attrs.field(factory=dict)
    groups: dict[str, list[str]] = attrs.field(factory=dict)
    #: By queue, the jobs to run later: (when, payload).
    #: Queue -> (when, payload, jid) of each job scheduled on it.
    scheduled: dict[str, list[tuple[float, str, str]]] = attrs.field(factory=dict)
    unique: list[UniquePush] = attrs.field(factory=list)
    #: The jid indexes of jobs keeping their result or tracked, but unique ones' (see
    #: `UniquePush.index`).
    indexed: list[JidIndex] = attrs.field(factory=list)

    @classmethod
    def of(
        cls, jobs: Sequence[tuple[JobRecord, float | None]], now: float, config: Config
    ) -> PushBatch:
        """`jobs` (each with the time to run it, None or past: now) sorted in; a queue name
        a middleware changed into one that can't be is a ValueError."""
        for queue in {job.queue for job, _ in jobs}:
            queues.checked_name(queue)  # the class's own was checked when it was defined
        batch = cls()
        for job, at in jobs:
            batch.add(job, at if at is not None and at > now else None, now, config)
        return batch

    def add(self, job: JobRecord, run_at: float | None, now: float, config: Config) -> None:
        """Sort in one job (`run_at` None: now)."""
        self.jids.append(job.jid)
        tracked = is_tracked(job, config.track_status)
        if tracked:
            self.tracked[job.jid] = job.queue
        text = payload.encode(job, enqueued_at=None if run_at is not None else now)
        index = _index(job, run_at, now, config.status_expiry if tracked else 0)
        lock = job.extra.get("unique_lock")
        if isinstance(lock, str) and unique.locks_at_enqueue(str(job.extra.get("unique"))):
            ttl = unique.ttl_of(job.extra, config.unique_lock_ttl)
            self.unique.append(
                UniquePush(
                    queue=job.queue,
                    payload=text,
                    jid=job.jid,
                    lock=lock,
                    ttl=unique.enqueue_ttl(ttl, run_at, now),
                    at=run_at,
                    tracked=tracked,
                    index=index,
                )
            )
            return
        if index is not None:
            self.indexed.append(index)
        if run_at is not None:
            self.scheduled.setdefault(job.queue, []).append((run_at, text, job.jid))
        else:
            self.groups.setdefault(job.queue, []).append(text)

    def is_one_plain_push(self) -> bool:
        """Whether this is one queue's untracked pushes alone (the fast path: one script
        call)."""
        return (
            not (self.unique or self.scheduled or self.tracked or self.indexed)
            and len(self.groups) == 1
        )

    def only_push(self) -> tuple[str, list[str]]:
        """The queue and payloads of a plain push."""
        ((queue, payloads),) = self.groups.items()
        return queue, payloads

    def replies_by_jid(self, replies: Sequence[int]) -> dict[str, int]:
        """The replies to the unique pushes, by jid (see `EnqueueStore.push_unique`)."""
        return dict(zip((push.jid for push in self.unique), replies, strict=True))

    def queued(self, replies: dict[str, int]) -> list[tuple[str, str]]:
        """The tracked jobs (queue, jid) to mark `queued` beside the plain pushes: a unique
        job's push marks its own (and only if pushed just now: one pushed before may be
        running)."""
        return [(queue, jid) for jid, queue in self.tracked.items() if jid not in replies]

    def pushed(self, replies: dict[str, int]) -> list[bool]:
        """Per job in order, whether it is pushed: all but a unique job whose lock another
        jid held."""
        return [replies.get(jid, 1) != 0 for jid in self.jids]


def _index(job: JobRecord, run_at: float | None, now: float, status_ttl: float) -> JidIndex | None:
    """The jid index entry `job`'s push writes first: as long as its result needs it, if
    it keeps one; else, tracked (its status kept `status_ttl` seconds, 0: it isn't), for its
    status (`adapters.job_records`); else none."""
    keep = results.keep_of(job)
    if keep is not None:
        return JidIndex(job.jid, job.queue, results.index_ttl_at_push(keep, run_at, now))
    return job_records.index(job.jid, job.queue, [status_ttl]) if status_ttl else None
