"""Noticing that Redis lost the periodic schedule, and putting this process's part back.

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
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable

import attrs

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

    def mark(self) -> None:
        """Note the epoch once this process's schedule is stored (writing it if there is none)."""
        self._epoch = self.store.restore(secrets.token_hex(8), {}).epoch
        self._run_id = self.store.run_id()

    def lost(self, epoch: str | None) -> bool:
        """Whether the schedule's `epoch` as read says Redis lost the schedule; if it does,
        this process's entries are put back (where missing) before this returns."""
        if not self.config.periodic or epoch == self._epoch:
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

    def _report(self, restored: Restored) -> None:
        run_id, known = self.store.run_id(), self._run_id
        self._run_id = run_id
        names = ", ".join(sorted(job.name for job in self.config.periodic))
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
            "Redis lost its data (%s): the periodic schedule was gone, and with it every "
            "queued job and lock; put back this process's periodic jobs: %s",
            "it restarted or failed over empty: its run_id changed"
            if restarted
            else "flushed, or replaced by an empty server",
            names,
        )
