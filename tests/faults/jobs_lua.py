"""Jobs and configs for the payload, hand-back, retry-cap and heartbeat fault tests.

The runs are written down in the oracle file (see tests/faults/jobs.py);
death hooks append `error class jid` lines to the Redis list `deaths`.
"""

from __future__ import annotations

import time
from typing import Any

import attrs

import cogworker
from tests.faults.jobs import config, note, side_effects

#: How long a held job waits for its release before giving up (a test bound).
HOLD_LIMIT = 120.0


def record_death(job: dict[str, Any], exception: BaseException) -> None:
    """A death hook: note which error buried which job."""
    side_effects().rpush("deaths", f"{type(exception).__name__} {job['jid']}")


lua_config = attrs.evolve(config, concurrency=1, death_handlers=(record_death,))
#: A small hand-back budget, so a test sees a hung job buried after a few stops.
handback_config = attrs.evolve(lua_config, max_handbacks=2)


def release_key(jid: str) -> str:
    """The key whose existence lets a held job end."""
    return f"release:{jid}"


class Held(cogworker.Job):
    """Runs until its release key exists (whatever its arguments), noting start and end."""

    def perform(self, *_args: object) -> None:
        """Wait for the release."""
        note("start", self.jid)
        deadline = time.monotonic() + HOLD_LIMIT
        while not side_effects().exists(release_key(self.jid)):
            if time.monotonic() > deadline:
                raise TimeoutError("never released")
            time.sleep(0.05)
        note("end", self.jid)


class ParkedForever(cogworker.Job, unique="until_executed", track_status=True, retry=3):
    """Fails, and asks for a retry in 1e300 s: the "park it" idiom."""

    def perform(self, number: int) -> None:
        """Fail at once."""
        note("start", self.jid)
        raise RuntimeError(f"park {number}")

    @classmethod
    def retry_in(cls, count: int, exception: BaseException, job: dict[str, Any]) -> float:
        """Far beyond what Redis can hold as a TTL."""
        return 1e300
