"""StatusMarks: a "working" mark is written before its job's final status, or not at all."""

from __future__ import annotations

import threading

from cogworker.app.worker.status_marks import StatusMarks


def test_a_mark_taken_with_its_jobs_ack_is_dropped() -> None:
    """The ack's status replaces it at once: only the other jobs' marks are written."""
    marks = StatusMarks()
    marks.add("settled", "default", 1.0)
    marks.add("running", "default", 2.0)

    assert marks.take(settled={"settled"}) == {"running": ("default", 2.0)}
    assert not marks


def test_a_withdrawn_mark_is_never_taken() -> None:
    """A failure written by the processor drops the mark still waiting."""
    marks = StatusMarks()
    marks.add("failed", "default", 1.0)
    marks.add("other", "default", 2.0)

    marks.withdraw("failed", timeout=5.0)

    assert marks.take(settled=()) == {"other": ("default", 2.0)}


def test_withdrawing_a_mark_being_written_waits_for_that_write() -> None:
    """Its job's final status must go after it: withdraw returns once the write has ended."""
    marks = StatusMarks()
    marks.add("failed", "default", 1.0)
    assert marks.take(settled=()) == {"failed": ("default", 1.0)}  # the acker's write has begun
    withdrawn = threading.Event()

    def withdraw() -> None:
        marks.withdraw("failed", timeout=30.0)
        withdrawn.set()

    thread = threading.Thread(target=withdraw)
    thread.start()
    assert not withdrawn.wait(0.3)  # still being written
    marks.written()
    assert withdrawn.wait(10.0)
    thread.join(10.0)


def test_withdrawing_a_mark_never_handed_over_returns_at_once() -> None:
    """An untracked job, or one whose mark was written long ago: nothing to wait for."""
    marks = StatusMarks()
    marks.add("other", "default", 1.0)
    marks.take(settled=())

    withdrawn = threading.Event()
    thread = threading.Thread(target=lambda: (marks.withdraw("never", 30.0), withdrawn.set()))
    thread.start()
    assert withdrawn.wait(10.0)
    thread.join(10.0)
