"""The settler: writes what `domain.settlement` decided for a run, and copes when it can't.

An ack goes to the acker (batched) or is written at once.  A retry goes to
the acker too (a retry storm is when throughput matters most; it runs no
hook); if its batch's write fails it is settled again as interrupted
(`settlement.settle(..., interrupted=True)`) and remembered for the
reconciler.  Every other failure (a death, whose hooks run only once it is
written; a discard, a cancel, an expiry; a hard timeout's, whose process
exits next) is written at once, and if that write fails it is settled
again as interrupted and written once more; what still can't be written
is remembered for the reconciler.  Either way the
job stays on this process's in-progress list until its outcome is written,
so a crash meanwhile makes it an orphan (run again), never a loss.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal

import attrs
import redis

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import outcome_record
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.app.death import DeathNotice
from cogworker.app.job_record import new_jid
from cogworker.app.worker.acker import Acker, Filing
from cogworker.app.worker.ownership import report_ack_interrupted, report_lost_ownership
from cogworker.app.worker.periodic_watch import EpochWatch
from cogworker.app.worker.running import Attempt
from cogworker.app.worker.state import WorkerState
from cogworker.domain import payload, settlement

#: The failure settled again as interrupted, once its first write failed.
Interrupted = Callable[[], settlement.Unsuccessful]


@attrs.define
class Settler:
    """Writes settlements for one worker process."""

    settles: SettleStore
    recovers: RecoverStore
    state: WorkerState
    logger: logging.Logger
    #: This process's identity (None: basic fetch, no in-progress list to check).
    owner: str | None
    #: Writes acks in batches; None: each ack is written before the next job.
    acker: Acker | None = None
    #: Tells a loss of Redis's data from an orphan recovery when a job is found gone.
    epoch_watch: EpochWatch | None = None
    clock: Callable[[], float] = time.time

    def write_ack(self, fetched: Fetched, ack: settlement.Ack) -> None:
        """Acknowledge a successful run (batched when there is an acker)."""
        order = self._order(fetched, ack)
        if self.acker is not None:
            self.acker.submit(order)
            return
        try:
            owned = self.settles.settle(self.owner, order, self.clock())
        except redis.RedisError as error:
            self.state.pending.remember(order)
            report_ack_interrupted(self.logger, error, [ack.jid])
            return
        self._settled(fetched, ack.jid, ack.class_name, owned)

    def write_ack_later(
        self, fetched: Fetched, decided: Callable[[], settlement.Ack], jid: str
    ) -> None:
        """Acknowledge `jid`'s successful run whose ack `decided()` makes on the acker's
        thread (here and now without an acker)."""
        if self.acker is None:
            self.write_ack(fetched, decided())
            return
        place = self.state.places.place_of(jid)  # its run may be forgotten by then
        self.acker.submit_later(lambda: self._order(fetched, decided(), place))

    def files_later(self, decided: settlement.Unsuccessful) -> bool:
        """Whether `write_failure` hands `decided` to the acker (it then returns at once)."""
        return self.acker is not None and isinstance(decided, settlement.ToRetry)

    def write_failure(
        self,
        fetched: Fetched,
        attempt: Attempt,
        decided: settlement.Unsuccessful,
        interrupted: Interrupted,
        filed: Callable[[], None],
        at_once: bool = False,
    ) -> DeathNotice | None:
        """File a run that didn't succeed (or a job that expired unrun), calling `filed`
        once this write filed it (not when an interrupted one did); the death hooks' notice
        if any.  A retry is handed to the acker (`files_later`) unless asked `at_once`."""
        if self.acker is not None and self.files_later(decided) and not at_once:
            order = self._order(fetched, decided)
            place = order.outcome.limit_place  # its run may be forgotten by the time it fails

            def failed(cause: Exception) -> None:
                again = interrupted()
                self._remember_interrupted(again, cause, self._order(fetched, again, place))

            self.acker.submit(Filing(order, filed, failed))
            return None
        if self.acker is not None and decided.effects.status is not None:
            self.acker.withdraw_mark(decided.job.jid)  # "working" can't land after this status
        order = self._order(fetched, decided)
        try:
            written = self.settles.settle(self.owner, order, self.clock())
        except redis.RedisError as write_error:
            return self._write_interrupted(fetched, attempt, interrupted(), write_error)
        self._settled(fetched, decided.job.jid, decided.job.class_name, written)
        if not written:
            return None
        filed()
        return _notice(decided, attempt)

    def _write_interrupted(
        self,
        fetched: Fetched,
        attempt: Attempt,
        decided: settlement.Unsuccessful,
        cause: redis.RedisError,
    ) -> DeathNotice | None:
        job = decided.job
        order = self._order(fetched, decided)
        try:
            written = self.settles.settle(self.owner, order, self.clock())
        except redis.RedisError:
            self._remember_interrupted(decided, cause, order)
            return None
        self.logger.error(
            "couldn't record a failure (%s) at first; filed", cause, extra=_extra(decided)
        )
        self._settled(fetched, job.jid, job.class_name, written)
        return _notice(decided, attempt) if written else None

    def _remember_interrupted(
        self, decided: settlement.Unsuccessful, cause: Exception, order: SettleOrder
    ) -> None:
        """Keep `order`, writing the interrupted settlement `decided`, for the reconciler."""
        self.state.pending.remember(order)
        self.logger.error(
            "couldn't record a failure (%s); will file it later", cause, extra=_extra(decided)
        )

    def file_unparseable(self, fetched: Fetched, problem: payload.PayloadError) -> None:
        """File a fetched payload that isn't a job in dead, its text kept."""
        extra = {"queue": fetched.queue, "error": str(problem), "reason": "unparseable"}
        holder: tuple[str, Literal["list"]] | None = None
        if self.owner is not None:
            holder = (keys.in_progress(fetched.queue, self.owner), "list")
        try:
            self.recovers.bury_unreadable(
                holder, fetched.raw, problem, jid=new_jid(), now=self.clock(), queue=fetched.queue
            )
        except redis.RedisError:
            # Left on the in-progress list: the shutdown requeue parks it, then it's buried.
            self.logger.exception("couldn't file an unparseable payload in dead", extra=extra)
            return
        self.state.release(fetched.raw)
        self.logger.error("an unparseable payload moved to dead", extra=extra)

    def _order(
        self, fetched: Fetched, decided: settlement.Settlement, place: str | None = None
    ) -> SettleOrder:
        """The order writing `decided`, letting go of the limit place its run holds, if any."""
        jid = decided.jid if isinstance(decided, settlement.Ack) else decided.job.jid
        held = self.state.places.place_of(jid) if place is None else place
        return SettleOrder(fetched=fetched, outcome=outcome_record(decided, held))

    def _settled(self, fetched: Fetched, jid: str, class_name: str, written: bool) -> None:
        """The outcome's write came back: the job is no longer this process's to hold."""
        self.state.release(fetched.raw)
        if not written:
            report_lost_ownership(self.logger, self.epoch_watch, jid, class_name)


def _extra(decided: settlement.Unsuccessful) -> dict[str, str]:
    """The log fields of a failure whose write failed."""
    job = decided.job
    return {
        "jid": job.jid,
        "class": job.class_name,
        "reason": settlement.interruption_reason(decided),
    }


def _notice(decided: settlement.Unsuccessful, attempt: Attempt) -> DeathNotice | None:
    """The death hooks' notice, for a job just filed in dead."""
    if not isinstance(decided, settlement.ToDead) or attempt.error is None:
        return None
    return DeathNotice(
        entry=payload.to_dict(decided.job), exception=attempt.error, job_class=attempt.job_class
    )
