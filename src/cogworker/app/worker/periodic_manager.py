"""The periodic manager: the thread of every worker process that enqueues periodic jobs.

gather → decide → apply, for each entry of the schedule: read the schedule,
ask `cron.due_ticks` which ticks to handle, and claim each, oldest first:
one script in the run's queue's slot claims the tick and enqueues the run,
then one in the schedule's moves the entry on.  Of all the processes trying
a tick exactly one handles it; the others find it taken or the entry
changed ("stale") and look again.  A run is enqueued only while the job's running lock (and a unique
job's lock) is free: an on-time tick whose previous run is still queued or
running is skipped, a catch-up tick waits for it.  The lock lasts while the
run waits in its queue (`periodic_runs.queued_lock_ttl`); the heartbeat keeps
it alive while the run goes on, and the processor releases it on the run's
terminal attempt; a run that dies with its process lets go when the lock's
TTL (`Config.periodic_lock_ttl`) is up.

What runs is the schedule in Redis: a process tends every stored entry, its
own config's and those others merged in.  Its config changes the schedule
only at start-up (`load`): replaced by or merged with its `periodic` jobs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs
import redis

from cogworker.adapters.periodic_store import (
    Claim,
    ClaimResult,
    PeriodicStore,
    decode_entry,
    encode_entry,
)
from cogworker.app.config import Config
from cogworker.app.periodic_runs import push_run, queued_lock_ttl, run_of, scheduled_entry
from cogworker.app.worker.backoff import repeat
from cogworker.app.worker.periodic_log import ClaimLog, log_claim
from cogworker.app.worker.periodic_watch import EpochWatch
from cogworker.domain import cron
from cogworker.domain.cron import DROP, Due, ScheduleEntry

if TYPE_CHECKING:  # imported where used: no schedule, no time zones
    import zoneinfo

#: The longest pause between looks at the schedule (another process may change it).
MAX_PAUSE = 5.0
#: The pause before looking again after a tick had to wait or another process changed its entry.
RECHECK = 0.25
#: A look starts this long after the tick it wakes for, so the tick is due by then.
MARGIN = 0.002
#: Start-up changes tried in a row before the thread tries again later.
LOAD_ATTEMPTS = 10


@attrs.define
class PeriodicManager:
    """Tends the periodic schedule until the process stops."""

    store: PeriodicStore
    config: Config
    stopping: threading.Event
    logger: logging.Logger
    clock: Callable[[], float] = time.time
    _loaded: bool = False
    #: Stored entries already reported as unusable (reported once each).
    _unusable: set[bytes] = attrs.field(factory=set)
    #: Notices Redis losing the schedule, and puts this config's part back.
    watch: EpochWatch = attrs.field(
        kw_only=True,
        default=attrs.Factory(
            lambda self: EpochWatch(self.store, self.config, self.logger, self.clock),
            takes_self=True,
        ),
    )

    def load(self) -> bool:
        """Apply this config's periodic jobs to the stored schedule; whether it is done.

        Replaced or merged (`Config.periodic_replace`); each entry that stays
        keeps its last run, so catch-up counts from there.  A config without
        periodic jobs leaves the schedule alone.
        """
        if self._loaded or not self.config.periodic:
            self._loaded = True
            return True
        for _ in range(LOAD_ATTEMPTS):
            if self._load_once():
                self.watch.mark()
                self._loaded = True
                return True
        return False

    def prepare(self) -> None:
        """This config's periodic jobs into the stored schedule, and Redis's data epoch noted,
        before any worker thread runs (a job settled later compares the epoch with it).

        (The entries themselves were checked when the Config was built.)
        """
        try:
            self.load()
            self.watch.mark()
        except redis.RedisError as error:
            self.logger.warning(
                "couldn't update the periodic schedule (%s); the periodic thread will", error
            )

    def run(self) -> None:
        """The thread's loop."""
        repeat(
            self.tend,
            what="periodic jobs",
            logger=self.logger,
            until=self.stopping,
            maximum=MAX_PAUSE,
        )

    def _load_once(self) -> bool:
        read = self.store.schedule()
        now = self.clock()
        stored = {name: entry for name, raw in read.items() if (entry := decode_entry(raw))}
        configured = [scheduled_entry(job, self.config, now) for job in self.config.periodic]
        replace = self.config.periodic_replace
        schedule = cron.merged(stored, configured, replace=replace)
        texts = {entry.name: encode_entry(schedule[entry.name]) for entry in configured}
        writes = {name: text for name, text in texts.items() if text.encode() != read.get(name)}
        deletes = [name for name in read if name not in schedule] if replace else []
        if not self.store.change(read, writes, deletes):
            return False
        self.logger.info(
            "periodic schedule %s: %s%s",
            "replaced" if replace else "merged",
            ", ".join(sorted(schedule)),
            f"; removed {', '.join(sorted(deletes))}" if deletes else "",
        )
        return True

    def tend(self) -> float:
        """One look at the schedule: claim every entry's due ticks; the pause until the next look.

        Nothing is claimed before this config's start-up change is applied (`load`), and
        this config's entries are put back first if Redis lost the schedule.
        """
        if not self.load():
            return RECHECK
        schedule, epoch = self.store.schedule_and_epoch()
        if self.watch.lost(epoch):
            schedule = self.store.schedule()
        now = self.clock()
        pauses = [self._tend_entry(raw, now) for raw in schedule.values()]
        return max(0.0, min([MAX_PAUSE, *pauses]))

    def _tend_entry(self, raw: bytes, now: float) -> float:
        """Handle one entry's due ticks; the pause until it needs a look again."""
        usable = self._usable(raw)
        if usable is None:
            return MAX_PAUSE
        entry, zone = usable
        try:
            return self._claim_due(entry, zone, raw, now)
        except redis.RedisError:
            raise  # the loop's back-off deals with it
        except Exception:
            # A client middleware that raised, say: the other entries go on.
            self.logger.exception("periodic job %s: couldn't handle its ticks", entry.name)
            return MAX_PAUSE

    def _claim_due(
        self, entry: ScheduleEntry, zone: zoneinfo.ZoneInfo, raw: bytes, now: float
    ) -> float:
        due_ticks = cron.due_ticks(
            entry.cron,
            zone,
            since=entry.since,
            now=now,
            catch_up=self.config.periodic_catch_up,
            limit=self.config.periodic_catch_up_limit,
        )
        expected = raw
        for due in due_ticks:
            result, entry = self._claim(entry, zone, expected, due, now)
            if result in ("busy", "stale"):
                return RECHECK
            expected = encode_entry(entry).encode()
        return cron.next_tick(entry.cron, zone, now) - now + MARGIN

    def _claim(
        self,
        entry: ScheduleEntry,
        zone: zoneinfo.ZoneInfo,
        expected: bytes,
        due: Due,
        now: float,
    ) -> tuple[ClaimResult, ScheduleEntry]:
        """Claim one tick; how it went, and the entry as it is stored now."""
        next_run = cron.next_tick(entry.cron, zone, now)

        def ran(jid: str | None) -> ScheduleEntry:
            return cron.handled(entry, due, jid=jid, next_run=next_run)

        claim = Claim(
            name=entry.name,
            at=due.at,
            action=due.action,
            expected=expected,
            if_enqueued="",  # set once the run is known (see `push_run`)
            otherwise=encode_entry(ran(None)),
            lock_ttl=queued_lock_ttl(self.config),
            now=now,
            claim_ttl=self._last_due(entry, zone, due) - now + 1.0,  # a second past it
        )
        if due.action == DROP:
            result, jid = self.store.claim(claim), None
        else:
            run = run_of(entry, now, due.at)
            result, jid = push_run(
                self.store, self.config, claim, run, lambda jid: encode_entry(ran(jid))
            )
        log_claim(self.logger, self.config, self.store, ClaimLog(result, entry, due, jid))
        if result in ("busy", "stale"):
            return result, entry
        return result, ran(jid if result == "enqueued" else None)

    def _last_due(self, entry: ScheduleEntry, zone: zoneinfo.ZoneInfo, due: Due) -> float:
        """When the tick `due` is never due again (how long its claim must last)."""
        return cron.last_due(
            entry.cron,
            zone,
            due.at,
            catch_up=self.config.periodic_catch_up,
            limit=self.config.periodic_catch_up_limit,
        )

    def _usable(self, raw: bytes) -> tuple[ScheduleEntry, zoneinfo.ZoneInfo] | None:
        """A stored entry and its time zone, or None (reported once) if it can't be run."""
        entry = decode_entry(raw)
        problem = "not a schedule entry" if entry is None else cron.problem(entry.cron)
        zone = None
        if entry is not None and problem is None:
            import zoneinfo

            try:
                zone = zoneinfo.ZoneInfo(entry.tz)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                problem = f"unknown time zone {entry.tz!r}"
        if entry is not None and zone is not None:
            return entry, zone
        if raw not in self._unusable:
            self._unusable.add(raw)
            self.logger.error("a periodic schedule entry is ignored (%s): %r", problem, raw[:200])
        return None
