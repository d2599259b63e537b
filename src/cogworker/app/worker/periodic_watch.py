"""Noticing that Redis lost its data, and putting this process's periodic jobs back.

Redis can lose everything while the workers stay up: FLUSHALL, a restart
without persistence, a failover to an empty replica.  The schedule went
with it, and a periodic manager tends only what is stored, so without this
the periodic jobs would stop until a worker restarts.  The schedule's epoch
(`redis_keys.PERIODIC_EPOCH`) is the signal: it is written when the schedule
is first stored and vanishes with it.  A process that finds it missing, or
changed, adds its configured entries where their name is missing, in one
script (`lua/periodic_restore.lua`), so processes noticing at once add
nothing twice.  The first to notice logs the loss at WARNING, naming the
likely cause: a changed server `run_id` means Redis restarted or failed over.

Every worker process marks the epoch at start, periodic jobs or not: a
settlement that finds its job gone from this process's in-progress list
asks the watch (`check`), so a loss of data is said as such, not only
taken for another process's orphan recovery.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable

import attrs
import redis

from cogworker.adapters.periodic_store import PeriodicStore, Restored, encode_entry
from cogworker.app.config import Config
from cogworker.app.periodic_runs import scheduled_entry


@attrs.define
class EpochWatch:
    """One process's knowledge of the schedule's epoch and of the Redis server it talks to."""

    store: PeriodicStore
    config: Config
    logger: logging.Logger
    clock: Callable[[], float]
    _epoch: str | None = None
    _run_id: str | None = None
    #: The periodic thread, processor threads and the acker may all notice at once.
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def mark(self) -> None:
        """Note the epoch once this process's schedule is stored (writing it if there is none)."""
        with self._lock:
            self._mark()

    def _mark(self) -> None:
        self._epoch = self.store.restore(secrets.token_hex(8), {}).epoch
        self._run_id = self.store.run_id()

    def lost(self, epoch: str | None) -> bool:
        """Whether the schedule's `epoch` as read says Redis lost the schedule; if it does,
        this process's entries are put back (where missing) before this returns."""
        with self._lock:
            if self._epoch is None:  # never marked (no periodic jobs of its own): now
                self._mark()
                return False
            if epoch == self._epoch:
                return False
            now = self.clock()
            entries = {
                job.name: encode_entry(scheduled_entry(job, self.config, now))
                for job in self.config.periodic
            }
            restored = self.store.restore(secrets.token_hex(8), entries)
            self._epoch = restored.epoch
            self._report(restored)
            return True

    def check(self) -> None:
        """A settlement found its job gone: if Redis lost its data, say so (once per loss)."""
        try:
            self.lost(self.store.epoch())
        except redis.RedisError:
            return  # Redis away now: the periodic thread's next look, or the next check, tells

    def _report(self, restored: Restored) -> None:
        run_id, known = self.store.run_id(), self._run_id
        self._run_id = run_id
        names = ", ".join(sorted(job.name for job in self.config.periodic)) or "none"
        if not restored.created:
            self.logger.info(
                "the periodic schedule was put back after Redis lost its data; "
                "%d of this process's periodic jobs added (%s)",
                restored.added,
                names,
            )
            return
        restarted = run_id is not None and known is not None and run_id != known
        self.logger.warning(
            "Redis lost its data (%s): every queued job, lock and the periodic schedule went "
            "with it, and runs in flight can't be settled; put back this process's periodic "
            "jobs: %s",
            "it restarted or failed over empty: its run_id changed"
            if restarted
            else "flushed, or replaced by an empty server",
            names,
        )
