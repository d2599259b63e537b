"""Tracked jobs' "working" marks, waiting for the acker to write them with its next batch.

Marking a job working as it starts cost a round trip of its own, most of
a tracked short job's time; the acker writes the marks with its acks
instead, a moment later.  A mark must never land after its job's final
status:

* a job's ack is handed to the acker after its mark, and the acker takes
  acks before marks, so a mark goes in the same batch as its job's ack
  (where it is dropped: the ack's status replaces it at once) or an earlier
  one, and a batch writes its marks first;
* a failure is written by the processor itself: `withdraw` first drops the
  job's mark if it is still waiting, or waits for the write carrying it.
"""

from __future__ import annotations

import threading
from collections.abc import Collection

import attrs

from cogworker.adapters.jobs.status_marks import Mark


@attrs.define
class StatusMarks:
    """The marks handed over and not yet written, by jid (with the job's queue and when it
    started)."""

    _changed: threading.Condition = attrs.field(factory=threading.Condition)
    _waiting: dict[str, Mark] = attrs.field(factory=dict)
    #: The jids of the marks in the write going on now.
    _writing: frozenset[str] = frozenset()

    def add(self, jid: str, queue: str, started_at: float) -> None:
        """Hand over the mark of `jid`, a job of `queue`."""
        with self._changed:
            self._waiting[jid] = (queue, started_at)

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def take(self, settled: Collection[str]) -> dict[str, Mark]:
        """Every waiting mark for the next write, except those of `settled` jobs (dropped).

        Call `written` once that write has ended, whether it went through or not.
        """
        with self._changed:
            taken, self._waiting = self._waiting, {}
            self._writing = frozenset(taken)
        return {jid: at for jid, at in taken.items() if jid not in settled}

    def written(self) -> None:
        """The write of the marks last taken has ended."""
        with self._changed:
            self._writing = frozenset()
            self._changed.notify_all()

    def withdraw(self, jid: str, timeout: float) -> None:
        """Make sure `jid`'s mark can't land after this call: drop it, or wait for its write.

        (The write is one round trip, bounded by the socket timeout; `timeout` is a backstop.)
        """
        with self._changed:
            self._waiting.pop(jid, None)
            self._changed.wait_for(lambda: jid not in self._writing, timeout)
