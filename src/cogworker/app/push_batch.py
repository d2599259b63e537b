"""`PushBatch`: the jobs of one enqueue call, sorted by how each is pushed."""

from __future__ import annotations

import attrs

from cogworker.adapters.jobs.enqueue import UniquePush
from cogworker.app.config import Config
from cogworker.domain import payload, unique
from cogworker.domain.job import JobRecord


@attrs.define
class PushBatch:
    """Jobs sorted by how they are pushed: onto queues, scheduled, or unique (lock first)."""

    groups: dict[str, list[str]] = attrs.field(factory=dict)
    scheduled: list[tuple[float, str]] = attrs.field(factory=list)
    unique: list[UniquePush] = attrs.field(factory=list)

    @property
    def unique_jids(self) -> list[str]:
        """The jids of the unique pushes, in order."""
        return [push.jid for push in self.unique]

    def add(self, job: JobRecord, run_at: float | None, now: float, config: Config) -> None:
        """Sort in one job (`run_at` None: now)."""
        text = payload.encode(job, enqueued_at=None if run_at is not None else now)
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
                )
            )
        elif run_at is not None:
            self.scheduled.append((run_at, text))
        else:
            self.groups.setdefault(job.queue, []).append(text)

    def is_one_plain_push(self) -> bool:
        """Whether this is one queue's pushes alone (the fast path: one script call)."""
        return not self.unique and not self.scheduled and len(self.groups) == 1

    def only_push(self) -> tuple[str, list[str]]:
        """The queue and payloads of a plain push."""
        ((queue, payloads),) = self.groups.items()
        return queue, payloads
