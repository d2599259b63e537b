"""Job classes and the APP config of the per-key limit tests (tests/app/test_limits.py).

Jobs record in the side-effect Redis (`tests.app.jobs.side_effects`) how many
of their key run at this moment and the most ever seen, in one script each
way, so the test reads the peak per key without sampling gaps.
"""

from __future__ import annotations

import time
from typing import Any

import cogworker
from cogworker import Job
from tests.app.jobs import side_effects

#: Short timings: due (deferred) jobs are found within ~0.15 s; a place or a process
#: not renewed for 2 s counts as gone.
limits_config = cogworker.Config(
    poll_interval=0.1,
    heartbeat_interval=0.2,
    orphan_threshold=2.0,
    shutdown_timeout=2.0,
    concurrency=20,
    log_level="WARNING",
)

#: INCR the key's "running" counter and raise its "peak" to it; returns the count.
_ENTER = """
local n = redis.call("INCR", KEYS[1])
if n > tonumber(redis.call("GET", KEYS[2]) or "0") then
  redis.call("SET", KEYS[2], n)
end
return n
"""


def _first(args: list[Any]) -> str:
    return str(args[0])


class ThreeAtOnce(
    Job,
    limit=cogworker.Concurrency(max=3, key=_first, wait=0.05, longest_wait=0.4),
):
    """Runs for `seconds` counted in `running:KEY`, its peak in `peak:KEY`; adds its jid to
    `ran` (`runs:JID` counts its runs)."""

    def perform(self, key: str, seconds: float) -> None:
        client = side_effects()
        client.eval(_ENTER, 2, f"running:{key}", f"peak:{key}")
        time.sleep(seconds)
        pipe = client.pipeline(transaction=False)
        pipe.decr(f"running:{key}")
        pipe.incr(f"runs:{self.jid}")
        pipe.sadd("ran", self.jid)
        pipe.execute()


class HoldsOne(Job, limit=cogworker.Concurrency(max=1, key=_first, name="one", wait=0.05)):
    """Holds its key's only place until `release` exists (its first run only: a run after
    `release` ends at once); adds its jid to `holding` while it waits."""

    def perform(self, key: str) -> None:
        client = side_effects()
        client.sadd("holding", self.jid)
        while not client.exists("release"):
            time.sleep(0.02)
        client.incr(f"runs:{self.jid}")


class SharesOne(Job, limit=cogworker.Concurrency(max=1, key=_first, name="one", wait=0.05)):
    """Shares `HoldsOne`'s limit (its name): records its run in `runs:JID`."""

    def perform(self, key: str) -> None:
        side_effects().incr(f"runs:{self.jid}")


class FivePerSecond(
    Job, limit=cogworker.Rate(max=5, per=1.0, key=_first, wait=0.05, longest_wait=0.4)
):
    """Records its start on Redis's clock in `starts` (milliseconds)."""

    def perform(self, key: str) -> None:
        client = side_effects()
        seconds, micros = client.time()
        client.rpush("starts", seconds * 1000 + micros // 1000)
