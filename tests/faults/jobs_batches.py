"""Jobs and config of the batch fault test: members that succeed, fail then succeed, or
die, and callbacks that count their runs (in the test's Redis, next to the oracle)."""

from __future__ import annotations

import time

import attrs

import cogworker
from tests.faults.jobs import config as fault_config
from tests.faults.jobs import note, side_effects

#: Retries come back at once (`Member.retry_in`), so a batch drains in seconds.
config = attrs.evolve(fault_config, concurrency=8, log_level="WARNING")


class MemberFailedError(RuntimeError):
    """What a failing member raises."""


class Member(cogworker.Job, queue="batch", retry=2):
    """A batch member: `fate` "ok" succeeds, "flaky" fails its first attempt then
    succeeds, "die" fails every attempt (dead after its retries)."""

    @classmethod
    def retry_in(cls, count: int) -> float:
        return 0.05

    def perform(self, n: int, fate: str) -> None:
        note("start", self.jid)
        time.sleep(0.03)  # long enough for the test to kill processes mid-batch
        attempts = side_effects().incr(f"attempts:{self.jid}")
        if fate == "die" or (fate == "flaky" and attempts == 1):
            raise MemberFailedError(f"member {n} ({fate}) failed attempt {attempts}")
        note("end", self.jid)


class OnSuccess(cogworker.Job, queue="callbacks"):
    """Counts its runs per batch."""

    def perform(self, bid: str, label: str) -> None:
        side_effects().incr(f"fired:success:{bid}")


class OnComplete(cogworker.Job, queue="callbacks"):
    """Counts its runs per batch."""

    def perform(self, bid: str, label: str) -> None:
        side_effects().incr(f"fired:complete:{bid}")
