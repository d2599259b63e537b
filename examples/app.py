"""An example cogworker app: `cogworker work examples.app` runs its jobs.

`python -m examples.demo` keeps enqueueing a mix of them, so you can watch
jobs run, retry (`FlakyCharge` fails one time in three) and die
(`ImportReport` never works, and gives up after two retries).
"""

from __future__ import annotations

import logging
import random
import time

from cogworker import Config, Job

#: Short timings so the demo shows retries within a minute.
config = Config(
    concurrency=5,
    queues=("critical", "default"),
    poll_interval=1.0,
    heartbeat_interval=2.0,
)

log = logging.getLogger("examples")


class SendWelcomeEmail(Job):
    """Sends a welcome email (here: sleeps a little and says so)."""

    def perform(self, user_id: int) -> None:
        """Pretend to talk to a mail server."""
        time.sleep(random.uniform(0.01, 0.2))
        log.warning("welcome email sent to user %s", user_id)


class FlakyCharge(Job, queue="critical", retry=5):
    """Charges a card through a payment API that fails one time in three."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """Retry quickly in the demo: 2 s, 4 s, 8 s ..."""
        return 2.0 * 2**count

    def perform(self, order_id: int, cents: int) -> None:
        """Raise now and then, as real network calls do."""
        if random.random() < 1 / 3:
            raise ConnectionError(f"payment API timed out charging order {order_id}")
        log.warning("charged %d cents for order %s", cents, order_id)


class ImportReport(Job, retry=2):
    """Imports a report from a file that isn't there: it retries twice, then goes to dead."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        """Retry after 3 s so the demo reaches the dead set soon."""
        return 3.0

    @classmethod
    def retries_exhausted(cls, job: dict[str, object], exception: Exception) -> None:
        """A death hook: runs once the job is in dead."""
        log.error("gave up importing %s: %s", job["args"], exception)

    def perform(self, path: str) -> None:
        """Always fails."""
        with open(path) as report:
            report.read()
