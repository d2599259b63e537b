"""Periodic jobs whose class options matter: a unique one, a tracked one parked in a queue no
worker of the test serves, and a client middleware that records what it saw."""

from __future__ import annotations

import time

import attrs

import cogworker
from cogworker import JobRecord, Periodic
from cogworker.app.middleware import Push
from tests.periodic.jobs import base

#: The queue of `Parked`: the test's workers don't serve it, so its runs stay queued.
PARKED_QUEUE = "parked"
#: Every job a `record_pushes` middleware saw, in order.
SEEN: list[JobRecord] = []


class UniqueSleeps(cogworker.Job, unique="until_executed"):
    """Sleeps; a duplicate enqueue while a run is queued or running returns None."""

    def perform(self, seconds: float) -> None:
        """Sleep `seconds`."""
        time.sleep(seconds)


class Parked(cogworker.Job, queue=PARKED_QUEUE, track_status=True):
    """A tracked job on a queue nobody serves in the tests."""

    def perform(self) -> None:
        """Nothing to do."""


def record_pushes(job: JobRecord, push: Push) -> str | None:
    """Note the job and tag it, then push it."""
    SEEN.append(job)
    return push(attrs.evolve(job, extra={**job.extra, "seen_by": "record_pushes"}))


#: A 4 s unique job due every second.
unique_every_second = attrs.evolve(
    base, periodic=(Periodic(cron="* * * * * *", job=UniqueSleeps, args=[4.0], name="unique"),)
)
#: A tracked job due every second whose runs wait in their queue past the running lock's TTL.
parked_every_second = attrs.evolve(
    base,
    periodic=(Periodic(cron="* * * * * *", job=Parked, name="parked"),),
    periodic_lock_ttl=1.0,
)
