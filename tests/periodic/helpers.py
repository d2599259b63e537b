"""Reading what the periodic tests' workers did: runs, schedule entries, claims."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from tests.periodic.jobs import RUNS
from tests.support.processes import CogworkerProcess, wait_until


@attrs.frozen(kw_only=True)
class Run:
    """One run as the recording middleware saw it (`ended` None while it runs)."""

    jid: str
    name: str
    tick: float
    pid: int
    started: float
    ended: float | None = None


def runs(rc: redis.Redis) -> list[Run]:
    """Every run started so far, in the order they started."""
    starts: dict[str, dict[str, Any]] = {}
    ends: dict[str, float] = {}
    for raw in rc.lrange(RUNS, 0, -1):
        record = json.loads(raw)
        if record["event"] == "start":
            starts[record["jid"]] = record
        else:
            ends[record["jid"]] = record["at"]
    found = [
        Run(
            jid=jid,
            name=record["name"],
            tick=record["tick"],
            pid=record["pid"],
            started=record["at"],
            ended=ends.get(jid),
        )
        for jid, record in starts.items()
    ]
    return sorted(found, key=lambda run: run.started)


def entry(rc: redis.Redis, name: str) -> dict[str, Any] | None:
    """A periodic job's entry in the stored schedule, or None."""
    raw = rc.hget(keys.PERIODIC_SCHEDULE, name)
    return None if raw is None else dict(json.loads(raw))


def claim_of(rc: redis.Redis, name: str, tick: float, queue: str = "default") -> str | None:
    """What claimed a tick of a job whose runs go to `queue`: the jid it enqueued, "skipped",
    or None (unclaimed or expired)."""
    value = rc.get(keys.periodic_tick(queue, name, tick))
    return None if value is None else value.decode()


def workers_up(rc: redis.Redis, count: int, *workers: CogworkerProcess) -> None:
    """Wait until `count` worker processes have registered."""
    wait_until(
        lambda: rc.scard(keys.PROCESSES) >= count,
        20,
        message=lambda: "workers never came up:\n" + "\n".join(w.log_tail() for w in workers),
    )


def far_minute_cron(now: float) -> tuple[str, float]:
    """An hourly cron whose ticks are half an hour from `now`, and its latest tick before now.

    No tick of it is due soon or was due a moment ago, so which ticks a worker
    runs depends only on the stored last run, not on when the test runs.
    """
    moment = dt.datetime.fromtimestamp(now, dt.UTC)
    minute = (moment.minute + 30) % 60
    latest = moment.replace(minute=minute, second=0, microsecond=0)
    if latest.timestamp() > now:
        latest -= dt.timedelta(hours=1)
    return f"{minute} * * * *", latest.timestamp()
