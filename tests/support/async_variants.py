"""The async variant of a test job class, so one suite runs on both kinds of job.

The variant of `module.Name` is `module.AsyncName`: a subclass (same options,
same hooks, same body) whose `perform` is an ``async def``.  `register`, called
at the end of a jobs module, makes and binds the variants when the module is
imported, so a worker process loads one by its class path like any job.  A
test picks the class with `of_kind(jobs.Name, kind)`; the `kind` fixture
(tests/conftest.py) runs it once per kind.

An async variant awaits once, then runs the sync body on the event loop.  A
`Paced` job waits (a sleep, a gate to poll): its variant awaits each pause
instead of sleeping through it, so the loop runs other jobs meanwhile and a
stop can cancel it there, as it would a real coroutine.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Coroutine, Generator
from typing import Any, Literal, TypeVar

import cogworker
from cogworker.app.job_base import is_async_job
from cogworker.app.job_loading import load_job_class

Kind = Literal["sync", "async"]
#: `def perform` (run on a processor thread), `async def perform` (run on the event loop).
KINDS: tuple[Kind, ...] = ("sync", "async")
PREFIX = "Async"

J = TypeVar("J", bound=type[cogworker.Job])


class Paced(cogworker.Job):
    """A test job that waits: `steps` yields each pause in seconds, between its actions."""

    def steps(self, *args: Any) -> Generator[float, None, None]:
        """The job's body, yielding where it waits."""
        raise NotImplementedError(f"{type(self).__qualname__} must define steps()")

    def perform(self, *args: Any) -> None:
        """Sleep through each pause, on the processor thread."""
        with contextlib.closing(self.steps(*args)) as steps:
            for pause in steps:
                time.sleep(pause)


def register(*job_classes: type[cogworker.Job]) -> None:
    """Make the async variant of each class and bind it in the class's module."""
    for job_class in job_classes:
        assert job_class.__qualname__ == job_class.__name__, "a module-level class"
        variant = _async_variant(job_class)
        setattr(sys.modules[job_class.__module__], variant.__name__, variant)


def of_kind(job_class: J, kind: Kind) -> J:
    """`job_class` itself for "sync", its registered async variant for "async"."""
    if kind == "sync":
        return job_class
    name = PREFIX + job_class.__name__
    variant: J | None = getattr(sys.modules[job_class.__module__], name, None)
    assert variant is not None, f"{job_class.class_path()} has no async variant: register() it"
    # What a worker will load by the path it is enqueued under, and run on its event loop.
    assert load_job_class(variant.class_path()) is variant
    assert is_async_job(variant)
    return variant


def _async_variant(job_class: type[cogworker.Job]) -> type[cogworker.Job]:
    name = PREFIX + job_class.__name__
    perform = _awaits_pauses if issubclass(job_class, Paced) else _after_a_turn(job_class)
    namespace = {
        "__module__": job_class.__module__,
        "__qualname__": name,
        "__doc__": f"`{job_class.__name__}` with an async def perform.",
        "perform": perform,
    }
    return type(name, (job_class,), namespace)


async def _awaits_pauses(self: Paced, *args: Any) -> None:
    """A `Paced` job's async perform: each pause awaited on the loop."""
    with contextlib.closing(self.steps(*args)) as steps:
        for pause in steps:
            await asyncio.sleep(pause)


def _after_a_turn(job_class: type[cogworker.Job]) -> Callable[..., Coroutine[Any, Any, None]]:
    """An async perform that gives the loop a turn, then runs `job_class`'s sync body."""
    sync_perform = job_class.perform

    async def perform(self: cogworker.Job, *args: Any) -> None:
        await asyncio.sleep(0)
        sync_perform(self, *args)

    return perform
