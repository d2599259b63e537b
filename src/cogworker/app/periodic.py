"""`Periodic`: a job run on a cron schedule, as `Config(periodic=...)` lists it.

::

    Config(periodic=(
        Periodic(cron="*/5 * * * *", job=CleanupJob),
        Periodic(cron="0 9 * * 1-5", job=Report, args=["daily"], name="daily-report",
                 tz="Europe/Berlin"),
    ))

Every worker process runs the schedule; each tick is enqueued by exactly one
of them, and not while the job's previous run is still queued or running
(that tick is skipped).  A run carries its class's options (unique lock,
status tracking) as a client enqueue does.  A bad entry is a `ConfigError`
naming it when the `Config` is built, so `cogworker work` stops before
anything is enqueued.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from cogworker.app.job_base import JobBase
from cogworker.app.job_loading import load_job_class
from cogworker.app.job_record import check_importable
from cogworker.domain import cron
from cogworker.domain.cron import ScheduleEntry
from cogworker.domain.json_values import JSON, first_non_json
from cogworker.exceptions import ConfigError, UnknownJobClassError

if TYPE_CHECKING:  # imported where used: a worker that declares no periodic job never needs it
    import zoneinfo


def _class_path(job: object) -> str:
    return job.class_path() if isinstance(job, type) and issubclass(job, JobBase) else repr(job)


def _as_tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _fail(entry: Periodic, message: str) -> ConfigError:
    return ConfigError(f"periodic job {entry.name!r}: {message}")


def _check_cron(entry: Periodic, _: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise _fail(entry, f"cron must be a string, got {value!r}")
    found = cron.problem(value)
    if found is not None:
        raise _fail(entry, f"invalid cron expression {value!r}: {found}")


def _check_job(entry: Periodic, _: attrs.Attribute[Any], value: object) -> None:
    if not (isinstance(value, type) and issubclass(value, JobBase)):
        raise _fail(entry, f"job must be a cogworker Job class, got {value!r}")
    try:
        check_importable(value)
        loaded = load_job_class(value.class_path())
    except (ConfigError, UnknownJobClassError) as error:
        raise _fail(entry, f"a worker can't import its job class: {error}") from None
    if loaded is not value:
        raise _fail(entry, f"{value.class_path()} imports as another class than the one given")


def _check_args(entry: Periodic, _: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, tuple):
        raise _fail(entry, f"args must be a list, got {value!r}")
    found = first_non_json(list(value), "args")
    if found is not None:
        where, kind = found
        raise _fail(entry, f"args must be JSON-native; {where} is {kind}")


def _check_tz(entry: Periodic, _: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        raise _fail(entry, f"tz must be a time zone name, got {value!r}")
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise _fail(entry, f"unknown time zone {value!r}") from None


def _check_name(entry: Periodic, _: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value:
        raise ConfigError(
            f"periodic job of {_class_path(entry.job)}: name must be a non-empty string"
        )


@attrs.frozen(kw_only=True)
class Periodic:
    """One periodic job: run `job` with `args` at every tick of `cron` in time zone `tz`."""

    #: 5 fields, 6 with the seconds first (``*/10 * * * * *``), or an alias like ``@hourly``.
    cron: str = attrs.field(validator=_check_cron)
    job: type[JobBase] = attrs.field(validator=_check_job)
    args: tuple[JSON, ...] = attrs.field(default=(), converter=_as_tuple, validator=_check_args)
    #: Its name in the schedule (unique); by default the job's class path.
    name: str = attrs.field(
        default=attrs.Factory(lambda self: _class_path(self.job), takes_self=True),
        validator=_check_name,
    )
    #: An IANA time zone name the cron expression is read in.
    tz: str = attrs.field(default="UTC", validator=_check_tz)

    @property
    def zone(self) -> zoneinfo.ZoneInfo:
        """The time zone."""
        import zoneinfo

        return zoneinfo.ZoneInfo(self.tz)

    def entry(self, now: float) -> ScheduleEntry:
        """This job as a new entry of the stored schedule, added at `now`."""
        options = self.job.cogworker_options
        return ScheduleEntry(
            name=self.name,
            cron=self.cron,
            tz=self.tz,
            class_name=self.job.class_path(),
            queue=options.queue,
            retry=options.retry,
            args=self.args,
            added_at=now,
            next_run=cron.next_tick(self.cron, self.zone, now),
        )


def check_schedule(entries: Iterable[object]) -> None:
    """Raise ConfigError unless `entries` are `Periodic`s with distinct names."""
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, Periodic):
            raise ConfigError(f"Config.periodic holds {entry!r}, not a cogworker.Periodic")
        if entry.name in seen:
            raise ConfigError(
                f"periodic job {entry.name!r}: the name is used twice; give each a name="
            )
        seen.add(entry.name)
