"""What the threads of one worker process share."""

from __future__ import annotations

import json
import threading
import time
from typing import Protocol

import attrs
from returns.pipeline import is_successful

from cogworker.app.worker.interrupts import Interrupts
from cogworker.app.worker.lease import Lease
from cogworker.app.worker.limit_places import HeldPlaces
from cogworker.app.worker.pending import PendingSettlements
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON

#: Characters of a running job's arguments (as JSON) its live-work record
#: carries: the dashboard shows a preview, and every heartbeat sends it again.
ARGS_PREVIEW_CHARS = 1_000


@attrs.frozen
class RunningJob:
    """What a thread runs, as the dashboard's live work shows it."""

    jid: str
    class_name: str
    queue: str
    #: The payload as fetched (immutable, unlike the arguments the job is handed).
    payload: bytes
    run_at: float
    #: Its time limit in seconds (None: none).
    timeout: float | None = None

    def to_json(self) -> str:
        """The description the heartbeat records, its arguments cut to a preview, with the
        payload's times and retry fields (the job page of a running job shows them)."""
        decoded = payload.decode(self.payload)
        job = decoded.unwrap() if is_successful(decoded) else None
        args, cut = args_preview(job)
        record: dict[str, object] = {
            "jid": self.jid,
            "class": self.class_name,
            "queue": self.queue,
            "args": args,
            "run_at": self.run_at,
            **_shown_fields(job),
        }
        if cut:
            record["args_cut"] = True
        if self.timeout is not None:
            record["timeout"] = self.timeout
        return json.dumps(record)


def _shown_fields(job: JobRecord | None) -> dict[str, object]:
    """The payload's fields a running job's page shows besides its arguments (those set)."""
    if job is None:
        return {}
    fields: dict[str, object] = {
        "created_at": job.created_at,
        "enqueued_at": job.enqueued_at,
        "retry": job.retry,
        "retry_count": job.retry_count,
        "failed_at": job.failed_at,
        "retried_at": job.retried_at,
    }
    return {name: value for name, value in fields.items() if value is not None}


def args_preview(job: JobRecord | None) -> tuple[list[JSON], bool]:
    """A job's arguments, or (when their JSON is longer than ARGS_PREVIEW_CHARS)
    one string saying so, then their start; and whether they were cut (none for a
    payload that isn't a readable job).

    The note comes first: a table row shows only the start of the text.
    """
    args: list[JSON] = list(job.args) if job is not None else []
    text = json.dumps(args, ensure_ascii=False)
    if len(text) <= ARGS_PREVIEW_CHARS:
        return args, False
    note = f"(cut: the first {ARGS_PREVIEW_CHARS:,} of {len(text):,} characters)"
    return [f"{note} {text[:ARGS_PREVIEW_CHARS]}…"], True


def _jid_of(raw: bytes) -> str | None:
    decoded = payload.decode(raw)
    return decoded.unwrap().jid if is_successful(decoded) else None


class RunWatcher(Protocol):
    """Told of each run with a time limit as it starts and as its outcome is claimed
    (`pulse.RunWatch`: the companion that ends a worker frozen past a hard limit)."""

    def watch(self, work: RunningJob) -> None: ...

    def forget(self, jid: str) -> None: ...


@attrs.define
class WorkerState:
    """Flags and tables every thread of a worker process reads or writes."""

    identity: str
    started_at: float = attrs.field(factory=time.time)
    stopping: threading.Event = attrs.field(factory=threading.Event)
    quiet: threading.Event = attrs.field(factory=threading.Event)
    pending: PendingSettlements = attrs.field(factory=PendingSettlements)
    #: Cancels (and time limits) raised into running jobs.
    interrupts: Interrupts = attrs.field(factory=Interrupts)
    #: The per-key limits' places its running jobs hold (`limit_gate`).
    places: HeldPlaces = attrs.field(factory=HeldPlaces)
    #: Since when Redis has answered without a break (None while it doesn't).
    healthy_since: float | None = None
    #: Renewed by each beat that lands: fetches and starts wait while it has run out.
    lease: Lease = attrs.field(factory=Lease)
    _running: dict[str, RunningJob] = attrs.field(factory=dict)
    _running_lock: threading.Lock = attrs.field(factory=threading.Lock)
    _held_locks: dict[str, tuple[str, str]] = attrs.field(factory=dict)
    _deferred_releases: set[tuple[str, str]] = attrs.field(factory=set)
    #: Payloads this process knows it holds (fetched and not yet settled).
    _held: set[bytes] = attrs.field(factory=set)
    #: How many times it let go of them all (declared gone).
    _let_go: int = 0
    #: What `running` last encoded, by thread: a job is encoded once, not at every beat.
    _shown: dict[str, tuple[RunningJob, str]] = attrs.field(factory=dict)
    #: The jids whose run's outcome is being written: by their runner, or for it (timed out).
    _settling: set[str] = attrs.field(factory=set)
    #: The runners whose run was timed out "hard" and filed for them: stuck, not waited for.
    _abandoned: set[str] = attrs.field(factory=set)
    #: Told of the runs with a time limit (None: no pulse runs).
    run_watcher: RunWatcher | None = None

    def hold(self, raw: bytes) -> None:
        """Note a fetched job as this process's until `release`."""
        with self._running_lock:
            self._held.add(raw)

    def release(self, raw: bytes) -> None:
        """Note a job as settled (or handed back)."""
        with self._running_lock:
            self._held.discard(raw)

    def hold_fetched(self, raws: list[bytes], let_go: int) -> bool:
        """Note a fetch's jobs as this process's, unless it let go of every job since
        `let_go_count` said `let_go` (the fetch's reply came after that): then False."""
        with self._running_lock:
            if self._let_go != let_go:
                return False
            self._held.update(raws)
            return True

    def let_go_count(self) -> int:
        """How many times this process let go of every job (`let_go_of_all`)."""
        with self._running_lock:
            return self._let_go

    def let_go_of_all(self) -> int:
        """This process was declared gone: it holds none of the jobs it fetched before
        (their settlements find them gone, those waiting don't start); how many it held."""
        with self._running_lock:
            count = len(self._held)
            self._held.clear()
            self._let_go += 1
            return count

    def has_job(self, jid: str) -> bool:
        """Whether `jid` runs here, or was fetched here and waits to run."""
        with self._running_lock:
            if any(work.jid == jid for work in self._running.values()):
                return True
            held = [raw for raw in self._held if jid.encode() in raw]
        return any(_jid_of(raw) == jid for raw in held)

    def holds(self, raw: bytes) -> bool:
        """Whether this process knows it holds `raw`."""
        with self._running_lock:
            return raw in self._held

    def started(
        self, thread: str, work: RunningJob, held_lock: tuple[str, str] | None = None
    ) -> None:
        """Note that `thread` runs `work`, holding `held_lock` (lock, jid)."""
        with self._running_lock:
            self._running[thread] = work
            if held_lock is not None:
                self._held_locks[thread] = held_lock
        if work.timeout is not None and self.run_watcher is not None:
            self.run_watcher.watch(work)

    def finished(self, thread: str) -> None:
        """Note that `thread` is idle again."""
        with self._running_lock:
            work = self._running.pop(thread, None)
            self._held_locks.pop(thread, None)
            self._abandoned.discard(thread)
            if work is not None:
                self._settling.discard(work.jid)
                self.places.forget(work.jid)
        if work is not None:
            self._unwatch(work)

    def _unwatch(self, work: RunningJob) -> None:
        """The run `work` no longer needs its hard limit enforced from outside."""
        if work.timeout is not None and self.run_watcher is not None:
            self.run_watcher.forget(work.jid)

    def claim_settlement(self, runner: str, jid: str, *, abandon: bool = False) -> bool:
        """Whether the caller is the one to write the outcome of `jid`'s run on `runner`:
        the first to ask while that run is still noted as running (its runner as it ends,
        or the watchdog filing it as timed out), never both.  `abandon`: the watchdog's
        claim; a stop no longer waits for the runner (it is stuck)."""
        with self._running_lock:
            work = self._running.get(runner)
            if work is None or work.jid != jid or jid in self._settling:
                return False
            self._settling.add(jid)
            if abandon:
                self._abandoned.add(runner)
        # Claimed: its outcome is being written (or filed as timed out), however long it takes.
        self._unwatch(work)
        return True

    def abandoned(self) -> set[str]:
        """The runners stuck in a run filed for them: a stop doesn't wait for them."""
        with self._running_lock:
            return set(self._abandoned)

    def interrupt_running(self, runner: str, jid: str, error: type[BaseException]) -> bool:
        """Raise `error` into `jid`'s run if `runner` still runs it (a stale look must not
        leave an interrupt behind for a later run of the same job); whether it did."""
        with self._running_lock:
            work = self._running.get(runner)
            if work is None or work.jid != jid:
                return False
            self.interrupts.interrupt(jid, error)
            return True

    def defer_release(self, lock: str, jid: str) -> None:
        """Remember a lock release that failed (Redis away), for the reconciler."""
        with self._running_lock:
            self._deferred_releases.add((lock, jid))

    def deferred_releases(self) -> list[tuple[str, str]]:
        """The (lock, jid) releases still to do."""
        with self._running_lock:
            return sorted(self._deferred_releases)

    def released(self, lock: str, jid: str) -> None:
        """Forget a deferred release that has now been done."""
        with self._running_lock:
            self._deferred_releases.discard((lock, jid))

    def held_locks(self) -> list[tuple[str, str]]:
        """The (lock, jid) of the periodic runs going on now, for the heartbeat to renew."""
        with self._running_lock:
            return list(self._held_locks.values())

    def running(self) -> dict[str, str]:
        """What each busy thread runs, by thread name, as JSON.

        Encoded here, at a heartbeat, rather than as each job starts: most
        jobs start and end between two beats and are never shown.  Only the
        heartbeat thread calls it, so the cache needs no lock of its own.
        """
        with self._running_lock:
            running = dict(self._running)
        shown = {}
        for thread, work in running.items():
            cached = self._shown.get(thread)
            shown[thread] = cached if cached and cached[0] is work else (work, work.to_json())
        self._shown = shown
        return {thread: text for thread, (_, text) in shown.items()}

    def running_jobs(self) -> dict[str, RunningJob]:
        """What runs now, by the thread (or "loop:JID" for an async job) running it."""
        with self._running_lock:
            return dict(self._running)

    def running_payloads(self) -> set[bytes]:
        """The payloads of the jobs running now (as fetched)."""
        with self._running_lock:
            return {work.payload for work in self._running.values()}

    def busy(self) -> int:
        """How many threads run a job now."""
        with self._running_lock:
            return len(self._running)
