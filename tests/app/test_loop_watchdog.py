"""The blocked-loop warning names an async job holding the event loop, and stays quiet when
the loop was late with no job on it (a process starved of CPU on a loaded machine)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from cogworker.app.worker.event_loop import EventLoop
from tests.support.processes import wait_until

#: The warning's threshold here, and how long the loop is held: many times over it.
THRESHOLD = 0.1
HELD = 1.0


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.reasons.append(getattr(record, "reason", ""))


@pytest.fixture
def watched() -> Iterator[tuple[EventLoop, Records]]:
    """A real event loop and its watchdog on threads of their own; the warnings logged."""
    records = Records()
    logger = logging.getLogger(f"test-loop-watchdog-{id(records)}")
    logger.addHandler(records)
    loop = EventLoop(10, logger, block_warning=THRESHOLD, describe=lambda: "a job")

    def spawn(name: str, target: Callable[[], None]) -> None:
        threading.Thread(target=target, name=name, daemon=True).start()

    loop.start(spawn)
    yield loop, records
    loop.stop()


def _turn(loop: EventLoop) -> None:
    """Return once the loop has run a callback: it is turning again."""
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop.loop).result(timeout=10)


def test_a_late_loop_with_no_job_on_it_is_not_a_blocked_job(
    watched: tuple[EventLoop, Records],
) -> None:
    loop, records = watched
    _turn(loop)
    loop.loop.call_soon_threadsafe(time.sleep, HELD)
    time.sleep(HELD / 4)  # the loop is held now; the watchdog looks every THRESHOLD / 4
    _turn(loop)
    assert "loop-blocked" not in records.reasons


def test_a_job_holding_the_loop_is_named(watched: tuple[EventLoop, Records]) -> None:
    loop, records = watched

    async def holds_the_loop() -> None:
        time.sleep(HELD)

    loop.admit([holds_the_loop])
    wait_until(lambda: "loop-blocked" in records.reasons, 10, message=lambda: str(records.reasons))
    wait_until(lambda: loop.running() == 0, 10)
