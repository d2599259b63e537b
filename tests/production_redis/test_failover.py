"""A failover in the middle of a drain: kill -9 the primary; the workers, the dashboard and
the client carry on against the promoted replica by themselves.

Run without and with `min_replicas=1`, on a primary with two replicas (so the promoted
one still has a replica to wait for).  Asserted either way: every job whose enqueue had
reached the replicas runs to success at least once; no process is restarted.  Asserted
with `min_replicas=1`: no enqueue that returned (the live ones, made while the primary
dies) is lost, and no job whose outcome was acknowledged runs again.  Measured, not
asserted (printed, for docs/production-redis.md): how long the failover took, and what
was lost or ran twice.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import httpx
import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.production_redis import drain
from tests.production_redis.jobs import Drain, Live
from tests.production_redis.servers import SentinelTopology
from tests.support.processes import CogworkerProcess, wait_until
from tests.web.helpers import serving

#: A replica's WAIT answers within `replica_timeout` only if the machine isn't busy with
#: other tests: a late one is a shortfall, and then an acknowledged job may run again.
pytestmark = pytest.mark.solo

APP = "tests.production_redis.jobs:config"
#: Two threads a worker: the drain takes a few seconds, so the kill falls in its middle.
WORK = ["work", APP, "--concurrency", "2"]
MIX = drain.Mix(plain=3000, retried=300, scheduled=300, dead=0, unique=0)
#: The primary is killed once this share of the plain jobs has run.
KILL_AFTER = MIX.plain // 3
#: Seconds between the live enqueues (about 100 a second).
LIVE_PACE = 0.01


@attrs.define
class LiveEnqueues:
    """Enqueues a `Live` job every LIVE_PACE seconds on a thread of its own; which returned."""

    client: cogworker.Client
    returned: list[str] = attrs.field(factory=list)
    failed: int = 0
    _stop: threading.Event = attrs.field(factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        """Start enqueueing."""
        self._thread = threading.Thread(target=self._run, name="live-enqueues")
        self._thread.start()

    def stop(self) -> None:
        """Stop enqueueing, and wait for the one under way."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30.0)

    def _run(self) -> None:
        number = 0
        while not self._stop.wait(LIVE_PACE):
            number += 1
            try:
                jid = self.client.enqueue(Live, number, jid=f"live-{number}")
            except cogworker.CogworkerError:
                self.failed += 1  # raised: the caller knows it may not be there
                continue
            assert jid is not None
            self.returned.append(jid)


@pytest.fixture
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SentinelTopology]:
    """A primary, two replicas and three sentinels of this test's own (it kills one)."""
    started = SentinelTopology.start(tmp_path_factory.mktemp("failover"), replicas=2)
    yield started
    started.close()


def done(side_effects: redis.Redis) -> int:
    """Plain and scheduled jobs that have run (at least once)."""
    return int(side_effects.hlen("runs:drain"))


def ran(side_effects: redis.Redis) -> int:
    """Drain and live jobs that have run (at least once)."""
    return done(side_effects) + int(side_effects.hlen("runs:live"))


def primary_of(topology: SentinelTopology) -> redis.Redis:
    """A plain client of the server the sentinels call the primary now."""
    return redis.Redis(port=topology.primary_port() or 1, socket_timeout=2.0)


def registered(topology: SentinelTopology) -> bool:
    """Whether a worker process is registered on the primary."""
    with primary_of(topology) as primary:
        return bool(primary.scard(keys.PROCESSES))


def settled(topology: SentinelTopology) -> bool:
    """Whether the primary holds no job waiting: queue, schedule and retry set all empty."""
    if topology.primary_port() is None:
        return False
    with primary_of(topology) as primary:
        waiting = primary.llen(keys.queue("default"))
        return (
            int(
                waiting
                + primary.zcard(keys.schedule("default"))
                + primary.zcard(keys.retry("default"))
            )
            == 0
        )


def idle(topology: SentinelTopology) -> bool:
    """Whether no job waits and none is held by a process."""
    if not settled(topology):
        return False
    with primary_of(topology) as primary:
        held = primary.scan_iter(match=keys.in_progress("*", "*"))
        return sum(int(primary.llen(key)) for key in held) == 0


def held(topology: SentinelTopology) -> str:
    """What the primary's in-progress lists hold, for a failure's message."""
    with primary_of(topology) as primary:
        lists = {
            key: primary.lrange(key, 0, 5)
            for key in primary.scan_iter(match=keys.in_progress("*", "*"))
        }
    return f"in-progress lists: {lists}\n"


@pytest.mark.parametrize("min_replicas", [0, 1])
def test_workers_and_the_dashboard_carry_on_after_the_primary_is_killed(
    topology: SentinelTopology, rc: redis.Redis, redis_url: str, tmp_path: Path, min_replicas: int
) -> None:
    """Kill -9 the primary a third into a drain of plain, retried and scheduled jobs, while
    a client enqueues: no restart, every job runs; with min_replicas=1 nothing that
    returned is lost and nothing acknowledged runs again."""
    url = topology.url() + (f"?min_replicas={min_replicas}&replica_timeout=3")
    client = cogworker.Client(cogworker.Config(redis_url=url))
    drain.enqueue(client, MIX, schedule_in=2.0)
    with topology.primary.client() as primary:
        assert primary.wait(2, 10_000) == 2  # both replicas have the drain's enqueues
    env = {"COGWORKER_TEST_REDIS_URL": redis_url, "COGWORKER_WORK_REDIS_URL": url}
    workers: list[CogworkerProcess] = []
    live = LiveEnqueues(client)
    try:
        # The dashboard first: it takes seconds to start, and the drain would be over.
        with serving(tmp_path, "--redis-url", url) as dashboard:
            workers += [
                CogworkerProcess(WORK, directory=tmp_path, env=env, name=f"worker-{n}").start()
                for n in range(2)
            ]
            live.start()
            wait_until(lambda: done(rc) >= KILL_AFTER, 60.0, message=workers[0].log_tail)
            old_primary = topology.primary.port
            killed_at, done_at_kill, ran_at_kill = time.monotonic(), done(rc), ran(rc)
            topology.primary.kill()
            # Said if an acknowledged job runs again: which replica had more of the primary's
            # writes (they stop moving with its death; the promotion takes a second at least).
            offsets = topology.replica_offsets()
            wait_until(lambda: topology.primary_port() not in (None, old_primary), 30.0)
            promoted_after = time.monotonic() - killed_at
            promoted = f"port {topology.primary_port()} promoted, offsets at the kill {offsets}"

            wait_until(lambda: ran(rc) > ran_at_kill + 100, 60.0, message=workers[0].log_tail)
            resumed_after = time.monotonic() - killed_at
            wait_until(
                lambda: httpx.get(dashboard + "/api/stats", timeout=5).status_code == 200,
                30.0,
                ignore=(httpx.HTTPError,),
            )
            # Its kept connection died with the primary: that call fails, the next reconnects
            # (with min_replicas, once the other replica follows the new primary).
            late = wait_until(
                lambda: client.enqueue(Drain, -1, jid="late-1"),
                30.0,
                ignore=(cogworker.RedisUnavailableError, cogworker.EnqueueNotReplicatedError),
            )
            live.stop()
            wait_until(lambda: settled(topology), 60.0, message=workers[0].log_tail)
        assert all(worker.is_running for worker in workers)
        # Jobs whose acknowledgement the old primary took to its grave wait on their
        # worker's in-progress list: a stop hands them back, a fresh worker runs them.
        for worker in workers:
            assert worker.terminate(30.0) == 0, worker.log_tail()
        last = CogworkerProcess(WORK, directory=tmp_path, env=env, name="last")
        with last:
            wait_until(lambda: registered(topology), 30.0, message=last.log_tail)
            drain.wait_drained(rc, MIX, last)
            wait_until(lambda: late in drain.runs(rc, "drain"), 30.0, message=last.log_tail)
            wait_until(
                lambda: idle(topology), 60.0, message=lambda: held(topology) + last.log_tail()
            )
            assert last.terminate(30.0) == 0, last.log_tail()
    finally:
        live.stop()
        client.close()
        for worker in workers:
            worker.close()
    outcome = Outcome.of(rc, live, [*workers, last])
    if min_replicas:
        assert outcome.lost == [], "enqueues that returned, never run"
        excused = outcome.unacknowledged | outcome.unconfirmed
        assert outcome.twice <= excused, (
            f"acknowledged and confirmed by a replica, yet ran again ({promoted})"
        )
    print(
        f"\nfailover with min_replicas={min_replicas}: {done_at_kill} jobs done at the kill; "
        f"replica promoted {promoted_after:.1f}s after kill -9, 100 more jobs run "
        f"{resumed_after:.1f}s after it ({promoted}); {outcome}"
    )


@attrs.frozen
class Outcome:
    """What a failover cost: enqueues lost, jobs run twice, and which of those had no
    acknowledgement to lose (their worker found them gone when it finished them)."""

    live_returned: int
    live_failed: int
    lost: list[str]
    twice: set[str]
    unacknowledged: set[str]
    #: Jobs run twice whose first run fell in a window in which a worker said its writes
    #: reached too few replicas (`reason=replicas-short` to `replicas-back`): an ack then
    #: stood on the primary alone, which a failover may lose.
    unconfirmed: set[str]

    @classmethod
    def of(
        cls, side_effects: redis.Redis, live: LiveEnqueues, workers: list[CogworkerProcess]
    ) -> Outcome:
        """Read it from the runs recorded and the workers' logs."""
        ran = drain.runs(side_effects, "live")
        counted = [drain.runs(side_effects, kind) for kind in ("drain", "fails_once:done")]
        twice = {jid for runs in [*counted, ran] for jid, count in runs.items() if count > 1}
        windows = _short_windows(worker.log_text() for worker in workers)
        return cls(
            live_returned=len(live.returned),
            live_failed=live.failed,
            lost=[jid for jid in live.returned if jid not in ran],
            twice=twice,
            unacknowledged=_unacknowledged(worker.log_text() for worker in workers),
            unconfirmed={jid for jid in twice if _within(_first_run(side_effects, jid), windows)},
        )

    def __str__(self) -> str:
        return (
            f"{self.live_returned} live enqueues returned ({self.live_failed} raised), "
            f"{len(self.lost)} of them lost; {len(self.twice)} jobs ran to success more "
            f"than once, {len(self.twice & self.unacknowledged)} of them never acknowledged, "
            f"{len(self.unconfirmed)} first run while writes reached too few replicas"
        )


#: A worker's log line's time, at its start.
_LOGGED_AT = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)Z", re.M)
#: Before a shortfall is told, its write waited up to replica_timeout; an ack follows its
#: run by up to a batch's wait.
_SLACK = 5.0


def _short_windows(logs: Iterable[str]) -> list[tuple[float, float]]:
    """The spans in which a worker's writes reached too few replicas, from its log."""
    windows: list[tuple[float, float]] = []
    for log in logs:
        start: float | None = None
        for line in log.splitlines():
            if "reason=replicas-short" in line:
                start = _logged_at(line)
            elif "reason=replicas-back" in line and start is not None:
                windows.append((start, _logged_at(line)))
                start = None
        if start is not None:
            windows.append((start, float("inf")))
    return windows


def _logged_at(line: str) -> float:
    found = _LOGGED_AT.match(line)
    assert found is not None, f"a log line without its time: {line!r}"
    return dt.datetime.fromisoformat(found[1]).replace(tzinfo=dt.UTC).timestamp()


def _first_run(side_effects: redis.Redis, jid: str) -> float:
    """When `jid` first ran (whichever kind of job it is)."""
    for kind in ("drain", "fails_once:done", "live"):
        first = side_effects.hget(f"first:{kind}", jid)
        if first is not None:
            return float(first)
    raise AssertionError(f"{jid} ran twice, yet no first run is recorded")


def _within(moment: float, windows: list[tuple[float, float]]) -> bool:
    return any(start - _SLACK <= moment <= end + _SLACK for start, end in windows)


def _unacknowledged(logs: Iterable[str]) -> set[str]:
    """The jids of runs whose outcome found the job gone (nothing written for them)."""
    jids: set[str] = set()
    for log in logs:
        for line in log.splitlines():
            if "reason=lost-ownership" in line:
                jids.update(re.findall(r"\bjid=(\S+)", line))
    return jids
