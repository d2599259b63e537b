"""The checks `Config`'s fields run when a config is made: each bad value a `ConfigError`
naming the setting (`Config.NAME`) and what it got."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from cogworker.adapters import replication
from cogworker.app import redis_settings
from cogworker.app.periodic import check_schedule
from cogworker.domain import limits
from cogworker.domain.queues import plan_of
from cogworker.exceptions import ConfigError


def redis_url(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value:
        redis_settings.parsed_url(f"Config.{attribute.name}", value)


def masked_repr(url: str | None) -> str:
    return repr(url and redis_settings.masked(url))


def replicas(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None:
        _checked(replication.checked_replicas, value, f"Config.{attribute.name}")


def replica_timeout(_: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None:
        _checked(replication.checked_timeout, value, f"Config.{attribute.name}")


def _checked(check: Callable[[object, str], object], value: object, setting: str) -> None:
    try:
        check(value, setting)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def positive(_: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not _finite_number(value) or value <= 0:
        raise ConfigError(f"Config.{attribute.name} must be a finite number above 0, got {value!r}")


def not_negative(_: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not _finite_number(value) or value < 0:
        raise ConfigError(
            f"Config.{attribute.name} must be a finite number, 0 or more, got {value!r}"
        )


def _finite_number(value: object) -> bool:
    """An int or a float (not a bool), neither NaN nor infinite.  Every comparison with NaN
    is false (`nan <= 0` let it through), and an infinite interval, age or lifetime would
    reach a sleep or a Redis expiry that refuses it, far from here."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def count(minimum: int) -> Callable[[object, attrs.Attribute[Any], int], None]:
    """A count of things: a whole number (an `int`, not a bool), `minimum` or more.  A
    float or a string would pass the comparison (or fail it with a TypeError) only for
    its first use to fail far from here: a slice's bound, a Lua script's argument."""

    def check(_: object, attribute: attrs.Attribute[Any], value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(
                f"Config.{attribute.name} must be a whole number, {minimum} or more "
                f"(an int), got {value!r}"
            )

    return check


def seconds(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A limit in seconds (`limits.checked_seconds`); None is no limit."""
    if value is not None:
        try:
            limits.checked_seconds(f"Config.{attribute.name}", value)
        except ValueError as error:
            raise ConfigError(str(error)) from None


def queues(_: object, attribute: attrs.Attribute[Any], value: tuple[Any, ...]) -> None:
    try:
        plan_of(value)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"Config.queues: {error}") from None


def periodic(_: object, __: attrs.Attribute[Any], value: tuple[object, ...]) -> None:
    check_schedule(value)


def module_names(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    given: Iterable[object] = (
        value if isinstance(value, Iterable) and not isinstance(value, str) else (value,)
    )
    names: list[str] = []
    for name in given:
        if not isinstance(name, str) or not all(part.isidentifier() for part in name.split(".")):
            raise ConfigError(
                f"Config.job_modules: {name!r} is not a module name like 'myapp.jobs' "
                "(a name covers the modules under it too)"
            )
        names.append(name)
    return tuple(names)


def one_of(*choices: str) -> Callable[[object, attrs.Attribute[Any], str], None]:
    def check(_: object, attribute: attrs.Attribute[Any], value: str) -> None:
        if value not in choices:
            raise ConfigError(f"Config.{attribute.name} must be one of {choices}, got {value!r}")

    return check
