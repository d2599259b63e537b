"""Jobs and config of the fault tests over two queues (tests/faults/test_queue_lists.py):
the fault tests' jobs, each on a queue of its own."""

from __future__ import annotations

import attrs

from tests.faults.jobs import Sleep
from tests.faults.jobs import config as fault_config

#: Served in this order (strict priority).
QUEUES = ("high", "low")
config = attrs.evolve(fault_config, queues=QUEUES)


class SleepHigh(Sleep, queue="high"):
    """`Sleep` on the first queue."""


class SleepLow(Sleep, queue="low"):
    """`Sleep` on the second queue."""
