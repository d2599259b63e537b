"""`JobBase`: a job class as the client and the worker read it: its options, its
`perform`, the path a worker imports it by, and how a run calls it.

Users subclass `Job` (`app/job.py`), which adds the enqueue shortcuts through the
default client; the client side and the worker need only this base, so they never
import the shortcuts' client (that was an import circle: job -> client -> job).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from cogworker.domain import key_limits, limits, queues, unique

if TYPE_CHECKING:
    from cogworker.domain.json_values import JSON


def _check_retry(_: object, __: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, (bool, int)) or value < 0:
        raise ValueError(f"retry must be True, False or a whole number ≥ 0, got {value!r}")


def _check_queue(_: object, __: attrs.Attribute[Any], value: object) -> None:
    queues.checked_name(value)


def _check_seconds(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None:
        limits.checked_seconds(attribute.name, value)


def _check_limit(_: object, __: attrs.Attribute[Any], value: object) -> None:
    key_limits.checked_limit(value)


def _check_unique(_: object, __: attrs.Attribute[Any], value: object) -> None:
    if value is not None and value not in unique.MODES:
        raise ValueError(f"unique must be one of {unique.MODES}, got {value!r}")


@attrs.frozen(kw_only=True)
class JobOptions:
    """A job class's options, given as class keywords and inherited by subclasses."""

    queue: str = attrs.field(default="default", validator=_check_queue)
    #: `True` (25 retries), a number of retries, or `False`/`0` for none.
    retry: bool | int = attrs.field(default=True, validator=_check_retry)
    #: Keep this job's status (`cogworker.status(jid)`): queued, working, retrying, complete...
    track_status: bool = False
    #: "until_executed", "until_executing" or "while_executing": no duplicate meanwhile.
    unique: str | None = attrs.field(default=None, validator=_check_unique)
    #: How long its unique lock lasts (seconds); else `Config.unique_lock_ttl`.
    unique_for: float | None = None
    #: Seconds after its enqueue (or its due time) by which a run must have started, or it
    #: is dropped as expired; None: never.
    expires_in: float | None = attrs.field(default=None, validator=_check_seconds)
    #: Seconds a run may take before `JobTimeoutError` is raised into it; None:
    #: `Config.default_timeout`.
    timeout: float | None = attrs.field(default=None, validator=_check_seconds)
    #: A per-key limit (`cogworker.Concurrency`, `cogworker.Rate`); None: none.
    limit: key_limits.Limit | None = attrs.field(default=None, validator=_check_limit)
    #: Seconds a run's result (its return value, or how it ended) is kept for
    #: `Client.result`; None: `Config.keep_result` of the enqueuing client.
    keep_result: float | None = attrs.field(default=None, validator=_check_seconds)


class JobBase:
    """What every job class is: its options (class keywords, inherited and overridable),
    its `perform`, its hooks.  Users subclass `Job`, which adds the enqueue shortcuts.

    Optional class hooks (inherited, so a base class of your own is the
    place for an app-wide policy):

    * ``retry_in(cls, count, exception, job)`` → seconds before the next try,
      ``None`` for the default backoff, ``cogworker.KILL`` or ``cogworker.DISCARD``;
    * ``retries_exhausted(cls, job, exception)``, called once the job is in dead;
    * ``unique_key(cls, args)`` → the string a unique job's lock is keyed by
      (default: its arguments).

    Both may take fewer parameters.
    """

    cogworker_options: ClassVar[JobOptions] = JobOptions()

    #: The id of the job this instance is running (set by the worker).
    jid: str = ""
    #: Whether a cancel was asked for this run (set by the worker; see `cancelled`).
    cancel_check: Callable[[], bool] = staticmethod(lambda: False)

    @property
    def cancelled(self) -> bool:
        """Whether `Client.cancel` was asked for this run: check it between steps to stop
        cleanly (a sync job also gets `JobCancelledError` raised into it)."""
        return self.cancel_check()

    def __init_subclass__(
        cls,
        *,
        queue: str | None = None,
        retry: bool | int | None = None,
        track_status: bool | None = None,
        unique: str | None = None,
        unique_for: float | None = None,
        expires_in: float | None = None,
        timeout: float | None = None,
        limit: key_limits.Limit | None = None,
        keep_result: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        options = (
            ("queue", queue),
            ("retry", retry),
            ("track_status", track_status),
            ("unique", unique),
            ("unique_for", unique_for),
            ("expires_in", expires_in),
            ("timeout", timeout),
            ("limit", limit),
            ("keep_result", keep_result),
        )
        given = {name: value for name, value in options if value is not None}
        try:
            cls.cogworker_options = attrs.evolve(cls.cogworker_options, **given)  # type: ignore[arg-type]  # validated
        except ValueError as error:
            raise TypeError(f"{cls.__qualname__}: {error}") from None
        _check_perform(cls)

    def perform(self, *args: Any) -> None:
        """The work. Raise to fail the attempt (it is then retried, or goes to dead)."""
        raise NotImplementedError(f"{type(self).__qualname__} must define perform()")

    @classmethod
    def class_path(cls) -> str:
        """The name a worker imports this class by."""
        return f"{cls.__module__}.{cls.__qualname__}"


def perform_now(
    job_class: type[JobBase],
    jid: str,
    args: Sequence[JSON],
    cancelled: Callable[[], bool] | None = None,
) -> object:
    """One call of a sync job's `perform`; what it returned.  One that hands back work
    instead of doing it fails: its body never ran (a coroutine or generator was made and
    not driven).  `cancelled`: what the job's `cancelled` asks (a worker's cancel signal).
    """
    instance = _instance(job_class, jid, cancelled)
    perform: Callable[..., object] = instance.perform  # user code may return anything
    returned = perform(*args)
    if inspect.iscoroutine(returned) or inspect.isgenerator(returned):
        returned.close()  # no "never awaited" warning: it is reported here instead
    undriven = (inspect.isawaitable, inspect.isgenerator, inspect.isasyncgen)
    if any(check(returned) for check in undriven):
        raise TypeError(
            f"{job_class.__qualname__}.perform returned {type(returned).__name__} "
            "instead of running: a worker awaits perform only when it is an async def"
        )
    return returned


async def perform_awaited(
    job_class: type[JobBase],
    jid: str,
    args: Sequence[JSON],
    cancelled: Callable[[], bool] | None = None,
) -> object:
    """One awaited `perform` of an async job, what it returned (`cancelled` as for
    `perform_now`)."""
    instance = _instance(job_class, jid, cancelled)
    perform: Callable[..., Awaitable[object]] = instance.perform  # type: ignore[assignment]  # async def
    return await perform(*args)


def _instance(job_class: type[JobBase], jid: str, cancelled: Callable[[], bool] | None) -> JobBase:
    instance = job_class()
    instance.jid = jid
    if cancelled is not None:
        instance.cancel_check = cancelled
    return instance


def is_async_job(job_class: type[JobBase]) -> bool:
    """Whether `job_class`'s `perform` is an ``async def`` (run on a worker's event loop)."""
    return inspect.iscoroutinefunction(job_class.perform)


def _check_perform(cls: type[JobBase]) -> None:
    """Refuse a `perform` whose body a worker would never run: a generator of either kind."""
    perform = cls.perform
    if inspect.isasyncgenfunction(perform):
        kind = "an async generator function"
    elif inspect.isgeneratorfunction(perform):
        kind = "a generator function"
    else:
        return
    raise TypeError(
        f"{cls.__qualname__}.perform is {kind}: a worker calls perform (or awaits it) and "
        "doesn't iterate what it returns, so its body would never run; define it with def "
        "or async def"
    )
