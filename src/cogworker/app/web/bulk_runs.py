"""The bulk actions a dashboard process is running, and those it ran: in its memory only.

A bulk action ("Retry all matching class = X") runs on a thread of the
dashboard's process, batch after batch, until it has gone through the whole
set or is cancelled; its page follows its tally.  One runs at a time per
(set, action, filter): asking again while it runs shows the running one.
Nothing of this is in Redis: a restart of the dashboard stops a running
bulk action, and running it again is safe (it acts on what is still there).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

import attrs

from cogworker.app.web.entries import Filter
from cogworker.app.web.sets import Action
from cogworker.domain.bulk import Tally

State = Literal["running", "finished", "cancelled", "failed"]
#: Finished runs remembered (their pages show how they ended); the oldest go first.
KEEP_FINISHED = 50
#: Seconds the dashboard's shutdown waits for each running action's current batch.
STOP_WAIT = 5.0


@attrs.frozen(kw_only=True)
class BulkKey:
    """What a bulk action is: its set's page, its action and its filter."""

    slug: str
    action: Action
    where: Filter


@attrs.define
class BulkRun:
    """One bulk action's run: its tally so far and how it stands.

    Its thread writes it, requests read it: each field is replaced whole.
    """

    key: BulkKey
    #: Entries in the set when it started.
    size: int
    tally: Tally = attrs.field(factory=Tally)
    state: State = "running"
    #: Why it failed ("" unless it did).
    error: str = ""
    #: The thread doing it (None until started).
    thread: threading.Thread | None = None
    _stop: threading.Event = attrs.field(factory=threading.Event)

    @property
    def stopping(self) -> bool:
        """Whether it was asked to stop (it does between two batches)."""
        return self._stop.is_set()

    def cancel(self) -> None:
        """Stop after the batch under way."""
        self._stop.set()

    def progress(self) -> dict[str, str | int | bool]:
        """Its state and counts, as the progress endpoint answers them."""
        return {"state": self.state, "stopping": self.stopping, "size": self.size,
                **attrs.asdict(self.tally)}  # fmt: skip


@attrs.define
class BulkRuns:
    """The bulk actions of one dashboard, by what they are."""

    _runs: dict[BulkKey, BulkRun] = attrs.field(factory=dict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def get(self, key: BulkKey) -> BulkRun | None:
        """The run of `key`: running, or the last one that ended."""
        return self._runs.get(key)

    def start(self, key: BulkKey, size: int, work: Callable[[BulkRun], None]) -> BulkRun:
        """A new run of `key` doing `work` on a thread of its own, or the one running."""
        with self._lock:
            running = self._runs.get(key)
            if running is not None and running.state == "running":
                return running
            self._runs.pop(key, None)  # the newest last: the oldest are forgotten first
            self._forget_finished()
            run = BulkRun(key=key, size=size)
            self._runs[key] = run
            run.thread = threading.Thread(
                target=work, args=(run,), name=f"cogworker-bulk-{key.slug}", daemon=True
            )
            run.thread.start()
            return run

    def stop_all(self) -> None:
        """Cancel every running action and wait a little for each to stop (at shutdown)."""
        runs = list(self._runs.values())
        for run in runs:
            run.cancel()
        for run in runs:
            if run.thread is not None:
                run.thread.join(STOP_WAIT)

    def _forget_finished(self) -> None:
        ended = [key for key, run in self._runs.items() if run.state != "running"]
        for key in ended[: max(0, len(ended) - KEEP_FINISHED + 1)]:
            del self._runs[key]
