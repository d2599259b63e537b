"""The one adapter that calls user code: fitting arguments, copies, isolation."""

from __future__ import annotations

import functools
import logging
from typing import Any

import pytest

from cogworker.adapters.user_hooks import (
    ask_retry_in,
    call_with_fitting_args,
    deep_copy,
    error_record,
    positional_capacity,
    run_death_hook,
)
from cogworker.domain.failure import HookRaised, HookReturned
from cogworker.domain.json_values import JSON

LOGGER = logging.getLogger("tests.user_hooks")


class PermanentError(Exception):
    """A user's own exception type."""


class Job:
    """A user's job class with hooks of different shapes."""

    @classmethod
    def retry_in(cls, count: int, exception: BaseException) -> object:
        return (cls.__name__, count, type(exception).__name__)

    @staticmethod
    def retries_exhausted(job: dict[str, JSON]) -> object:
        return job["jid"]

    def bound(self, a: object, b: object, c: object, d: object) -> object:
        return (a, b, c, d)


class Notifier:
    """A callable object, as a death handler may be."""

    def __call__(self, job: object, exception: object) -> object:
        return (job, exception)


def test_fewer_params_ignore_the_rest() -> None:
    """A hook taking one parameter gets the first argument only."""

    def hook(count: int) -> int:
        return count

    assert positional_capacity(hook) == 1
    assert call_with_fitting_args(hook, 3, ValueError(), {"jid": "j"}) == 3


def test_no_params_get_nothing() -> None:
    """A hook taking nothing is called with nothing."""
    assert call_with_fitting_args(lambda: "called", 1, 2, 3) == "called"


def test_star_args_take_all() -> None:
    """A hook with `*args` is handed every argument."""

    def hook(*args: object) -> tuple[object, ...]:
        return args

    assert positional_capacity(hook) is None
    assert call_with_fitting_args(hook, 1, 2, 3) == (1, 2, 3)


def test_leading_params_and_star_args_take_all() -> None:
    """A hook with named parameters then `*rest` is handed every argument."""

    def hook(first: object, *rest: object) -> tuple[object, tuple[object, ...]]:
        return first, rest

    assert call_with_fitting_args(hook, 1, 2, 3) == (1, (2, 3))


def test_callable_objects() -> None:
    """An object with `__call__` is counted without its `self`."""
    notifier = Notifier()
    assert positional_capacity(notifier) == 2
    assert call_with_fitting_args(notifier, "job", "exc", "extra") == ("job", "exc")


def test_classmethods_leave_out_cls() -> None:
    """A classmethod hook (the usual `retry_in`) is counted without `cls`."""
    assert positional_capacity(Job.retry_in) == 2
    assert call_with_fitting_args(Job.retry_in, 4, KeyError(), {}) == ("Job", 4, "KeyError")


def test_staticmethods_and_bound_methods() -> None:
    """A staticmethod counts all its parameters; a bound method leaves out `self`."""
    assert call_with_fitting_args(Job.retries_exhausted, {"jid": "j9"}, ValueError()) == "j9"
    assert positional_capacity(Job().bound) == 4


def test_lambdas_with_defaults_get_as_many_as_they_take() -> None:
    """Parameters with defaults count: they are filled from the arguments before the default."""
    hook = lambda a, b=20, c=30: (a, b, c)  # noqa: E731 -- a lambda is the case under test
    assert positional_capacity(hook) == 3
    assert call_with_fitting_args(hook, 1, 2) == (1, 2, 30)
    assert call_with_fitting_args(hook, 1, 2, 3, 4) == (1, 2, 3)


def test_keyword_only_params_are_not_positional() -> None:
    """Keyword-only parameters take no positional argument."""

    def hook(job: object, *, verbose: bool = False) -> tuple[object, bool]:
        return job, verbose

    assert positional_capacity(hook) == 1
    assert call_with_fitting_args(hook, "job", "exc") == ("job", False)


def test_partials_count_what_is_left() -> None:
    """A `functools.partial` takes only the parameters it hasn't bound."""

    def hook(prefix: str, job: object, exception: object) -> tuple[str, object]:
        return prefix, job

    assert call_with_fitting_args(functools.partial(hook, "p"), "job", "exc", "x") == ("p", "job")


def test_an_unreadable_signature_gets_everything() -> None:
    """A callable whose signature can't be read (some builtins) is handed every argument."""
    assert positional_capacity(max) is None
    assert call_with_fitting_args(max, 3, 9, 4) == 9


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_run_death_hook_lets_base_exceptions_through(exc_type: type[BaseException]) -> None:
    """Ctrl-C and SystemExit are not the hook's failure to swallow: they propagate."""

    def interrupted(job: object) -> None:
        raise exc_type()

    with pytest.raises(exc_type):
        run_death_hook("death handler", interrupted, {"jid": "j1"}, ValueError(), LOGGER)


def test_run_death_hook_hands_a_copy() -> None:
    """A death hook that changes the job it gets changes nothing for the caller."""
    job: dict[str, JSON] = {"jid": "j7", "args": [1, {"k": "v"}], "retry_count": 3}
    snapshot = deep_copy(job)

    def meddle(received: dict[str, Any], exception: BaseException) -> None:
        received["jid"] = "changed"
        received["args"][1]["k"] = "changed"
        received["args"].append("more")

    run_death_hook("death handler", meddle, job, ValueError(), LOGGER)
    assert job == snapshot


def test_run_death_hook_isolates_a_raise(caplog: pytest.LogCaptureFixture) -> None:
    """A death hook that raises is logged at ERROR with the jid and traceback; the caller
    carries on."""

    def broken(job: object, exception: object) -> None:
        raise PermanentError("tracker down")

    with caplog.at_level(logging.ERROR, logger=LOGGER.name):
        run_death_hook("retries_exhausted", broken, {"jid": "j8"}, ValueError(), LOGGER)
    [record] = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == (
        f"retries_exhausted failed for jid=j8 (ignored): {__name__}.PermanentError: tracker down"
    )
    assert record.exc_info is not None


def test_ask_retry_in_hands_a_copy_and_returns_the_value() -> None:
    """`retry_in` gets count, exception and its own copy of the job; its value comes back."""
    job: dict[str, JSON] = {"jid": "j1", "args": [[1]]}
    error = PermanentError("nope")

    def hook(count: int, exception: BaseException, received: dict[str, Any]) -> object:
        received["args"][0].append(2)
        return (count, exception is error)

    assert ask_retry_in(hook, 2, error, job) == HookReturned(value=(2, True))
    assert job == {"jid": "j1", "args": [[1]]}


def test_ask_retry_in_turns_a_raise_into_a_record() -> None:
    """A `retry_in` that raises gives a HookRaised, not an exception."""

    def hook(count: int) -> object:
        raise PermanentError("bad hook")

    answer = ask_retry_in(hook, 0, ValueError(), {"jid": "j"})
    assert isinstance(answer, HookRaised)
    assert answer.error.class_name == f"{__name__}.PermanentError"
    assert answer.error.message == "bad hook"


def test_ask_retry_in_lets_base_exceptions_through() -> None:
    """Ctrl-C inside `retry_in` is not the hook's answer: it propagates."""

    def hook() -> object:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ask_retry_in(hook, 0, ValueError(), {"jid": "j"})


def test_deep_copy_copies_nested_containers() -> None:
    """The copy shares no list or dict with the original."""
    value = {"a": [1, {"b": [2]}]}
    copied = deep_copy(value)
    assert copied == value
    assert copied["a"] is not value["a"]


def test_deep_copy_never_raises() -> None:
    """Something that refuses to be copied is handed over as it is."""

    class Uncopyable:
        def __deepcopy__(self, memo: object) -> object:
            raise TypeError("no copies")

    value = Uncopyable()
    assert deep_copy(value) is value


def test_error_record_of_a_builtin() -> None:
    """A builtin exception is named without its module; message and traceback are kept."""
    try:
        raise ValueError("bad value")
    except ValueError as exc:
        record = error_record(exc)
    assert record.class_name == "ValueError"
    assert record.message == "bad value"
    assert record.backtrace.startswith("Traceback")
    assert "raise ValueError" in record.backtrace


def test_error_record_of_a_nested_class() -> None:
    """A user exception is named by its module and qualified name."""

    class InnerError(Exception):
        pass

    record = error_record(InnerError("x"))
    assert record.class_name == f"{__name__}.{InnerError.__qualname__}"
    assert "<locals>.InnerError" in record.class_name


def test_error_record_survives_a_broken_str() -> None:
    """An exception whose `__str__` raises gets a message naming its class and saying so."""

    class UnprintableError(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    record = error_record(UnprintableError())
    assert record.message == f"<{UnprintableError.__qualname__}: its str() raised>"
    assert record.backtrace  # traceback still formats (the stdlib copes too)
