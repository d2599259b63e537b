"""The one place cogworker calls user code: `retry_in` hooks and death hooks.

Every call here follows the same rules (README "Custom delay", "Death hooks"):

* a hook gets as many leading positional arguments as it accepts, so
  `retry_in(cls, count)` and `death_handler(job, exception)` both work;
* it gets its own copy of the job, so changing it changes nothing;
* an `Exception` it raises is caught and logged with the jid, and the
  caller carries on; a `BaseException` (Ctrl-C, `SystemExit`, shutdown)
  propagates;
* a live exception leaves here only as an `ErrorRecord`;
* a hook may be an ``async def``: awaited on the worker's loop when its job
  is an async one asking `retry_in`, else run to its end on a loop of its own.

It decides nothing: what a `retry_in` answer means is `domain.failure`'s.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from cogworker.adapters.backtrace import backtrace
from cogworker.domain.failure import HookRaised, HookReturned
from cogworker.domain.job import ErrorRecord
from cogworker.domain.json_values import JSON

T = TypeVar("T")

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def positional_capacity(hook: Callable[..., object]) -> int | None:
    """How many positional arguments `hook` takes; `None` for all of them.

    `None` when it takes `*args`, or when its signature can't be read (some
    builtins): then it is handed everything.  Bound methods and classmethods
    already leave out `self`/`cls`; an object is read through its `__call__`.
    """
    try:
        parameters = inspect.signature(hook).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return None
    return sum(1 for p in parameters if p.kind in _POSITIONAL)


def call_with_fitting_args(hook: Callable[..., T], *args: object) -> T:
    """`hook` called with as many of `args`, from the first, as it accepts."""
    capacity = positional_capacity(hook)
    if capacity is None:
        return hook(*args)
    return hook(*args[:capacity])


def deep_copy(value: T) -> T:
    """A deep copy of `value` to hand to user code; `value` itself if it can't be copied."""
    try:
        return copy.deepcopy(value)
    except Exception:  # whatever middleware put in a job, copying must not fail the caller
        return value


def finished(value: object) -> object:
    """`value`, or if a hook handed back an awaitable (an ``async def`` hook), what it
    gives once run to its end on an event loop of its own (the caller runs none)."""
    if not inspect.isawaitable(value):
        return value
    return asyncio.run(_awaited(value))


async def _awaited(awaitable: Awaitable[object]) -> object:
    return await awaitable


def ask_retry_in(
    hook: Callable[..., object], count: int, exception: BaseException, job: Mapping[str, JSON]
) -> HookReturned | HookRaised:
    """What a `retry_in(count, exception, job)` hook says, for `domain.failure.decide`.

    Nothing is logged here: `decide` says what to log.  `count` is the
    retries made before this failure (0 on the first).  An ``async def``
    hook is run to its end (see `finished`).
    """
    try:
        value = finished(call_with_fitting_args(hook, count, exception, deep_copy(dict(job))))
    except Exception as error:
        return HookRaised(error=error_record(error))
    return HookReturned(value=value)


async def ask_retry_in_async(
    hook: Callable[..., object], count: int, exception: BaseException, job: Mapping[str, JSON]
) -> HookReturned | HookRaised:
    """`ask_retry_in` from a running event loop: an ``async def`` hook is awaited on it."""
    try:
        value = call_with_fitting_args(hook, count, exception, deep_copy(dict(job)))
        if inspect.isawaitable(value):
            value = await value
    except Exception as error:
        return HookRaised(error=error_record(error))
    return HookReturned(value=value)


def run_death_hook(
    what: str,
    hook: Callable[..., object],
    job: Mapping[str, JSON],
    exception: BaseException,
    logger: logging.Logger,
) -> None:
    """Runs a death hook `hook(job, exception)` on its own copy of `job`, isolated.

    An `Exception` it raises is logged at ERROR with the jid, as `what`
    failing (`"retries_exhausted"`, `"death handler"`), and nothing else
    follows from it: the job is dead either way.
    """
    copied = deep_copy(dict(job))
    try:
        finished(call_with_fitting_args(hook, copied, exception))
    except Exception as error:
        record = error_record(error)
        logger.error(
            "%s failed for jid=%s (ignored): %s: %s",
            what,
            job.get("jid"),
            record.class_name,
            record.message,
            exc_info=error,
        )


#: How much of an exception's message is kept (with its record, in history, in a log line).
MESSAGE_LIMIT = 8_192
#: How much of a traceback's text is kept with the job.
BACKTRACE_LIMIT = 65_536


def error_record(exc: BaseException) -> ErrorRecord:
    """`exc` as the core sees it: qualified type name, message and traceback text."""
    return ErrorRecord(
        class_name=type_name(type(exc)),
        message=_message(exc),
        backtrace=_backtrace(exc),
    )


def summary(exc: BaseException) -> str:
    """`Type: message` of `exc` for a log line or a history record; never raises."""
    return f"{type(exc).__name__}: {_message(exc)}"


def type_name(cls: type) -> str:
    """`module.Qualname` of an exception type; just the name for builtins (`ValueError`)."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def clipped(text: str, limit: int) -> str:
    """`text`, or its first and last `limit // 2` characters when it is longer."""
    if len(text) <= limit:
        return text
    half = limit // 2
    left_out = len(text) - 2 * half
    return f"{text[:half]}\n[... {left_out} characters left out ...]\n{text[-half:]}"


def _backtrace(exc: BaseException) -> str:
    try:
        return clipped(backtrace(exc), BACKTRACE_LIMIT)
    # Formatting reads the exception's own attributes (`__notes__`...): user code too.
    except BaseException as error:
        return f"(its traceback couldn't be formatted: {summary(error)})"


def _message(exc: BaseException) -> str:
    try:
        text = str(exc)
    # A user exception's __str__ is user code: whatever it raises, the failure is filed.
    except BaseException:
        return f"<{type(exc).__qualname__}: its str() raised>"
    return clipped(text, MESSAGE_LIMIT)
