"""`Periodic` and the periodic settings of `Config`: defaults, and errors naming the bad entry."""

from __future__ import annotations

from typing import Any

import pytest

import cogworker
from cogworker import ConfigError, Periodic
from cogworker.app.config_overrides import with_overrides
from tests.periodic import jobs


def test_defaults_name_the_job_by_its_class_and_read_the_cron_in_utc() -> None:
    """Without name= and tz=, an entry is named by its class path and runs on UTC."""
    entry = Periodic(cron="*/5 * * * *", job=jobs.Tick)
    assert entry.name == jobs.Tick.class_path()
    assert entry.tz == "UTC"
    assert entry.args == ()
    assert Periodic(cron="@hourly", job=jobs.Sleeps, args=[1.5]).args == (1.5,)
    assert cogworker.Config().periodic == ()
    assert cogworker.Config().periodic_catch_up == "last"
    assert cogworker.Config().periodic_replace is True


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cron": "* * * *"}, "periodic job 'x': invalid cron expression '* * * *': expected 5"),
        ({"cron": "0 0 31 2 *"}, "job 'x': invalid cron expression '0 0 31 2 *': it never"),
        ({"cron": 5}, "periodic job 'x': cron must be a string"),
        ({"tz": "Europe/Atlantis"}, "periodic job 'x': unknown time zone 'Europe/Atlantis'"),
        ({"tz": "../etc/passwd"}, "periodic job 'x': unknown time zone"),
        ({"tz": None}, "periodic job 'x': tz must be a time zone name"),
        ({"job": object}, "periodic job 'x': job must be a cogworker Job class"),
        ({"job": jobs.base}, "periodic job 'x': job must be a cogworker Job class"),
        ({"args": "abc"}, "periodic job 'x': args must be a list"),
        ({"args": [{1: "int key"}]}, "periodic job 'x': args must be JSON-native; args[0] key 1"),
        ({"args": [(1, 2)]}, "periodic job 'x': args must be JSON-native; args[0] is tuple"),
        ({"name": ""}, "name must be a non-empty string"),
    ],
)
def test_a_bad_entry_is_a_config_error_naming_it(options: dict[str, Any], message: str) -> None:
    """Each kind of bad input says which entry and what is wrong with it."""
    given: dict[str, Any] = {"cron": "* * * * *", "job": jobs.Tick, "name": "x", **options}
    with pytest.raises(ConfigError) as raised:
        Periodic(**given)
    assert message in str(raised.value)


def test_a_job_class_a_worker_cannot_import_is_refused() -> None:
    """A class defined inside a function, or in __main__, can't be found by a worker."""
    with pytest.raises(ConfigError, match="'hidden': a worker can't import its job class"):
        jobs.bad_class  # noqa: B018  # the lookup builds the config
    renamed = type("Renamed", (cogworker.Job,), {"__module__": jobs.__name__})
    with pytest.raises(ConfigError, match="can't import its job class"):
        Periodic(cron="* * * * *", job=renamed)
    in_main = type("Script", (cogworker.Job,), {"__module__": "__main__"})
    with pytest.raises(ConfigError, match="Script is defined in __main__"):
        Periodic(cron="* * * * *", job=in_main)


def test_a_class_that_imports_as_another_is_refused() -> None:
    """A class whose path leads to a different class (shadowed) is a config error."""
    shadow = type("Tick", (cogworker.Job,), {"__module__": jobs.__name__})
    with pytest.raises(ConfigError, match="imports as another class"):
        Periodic(cron="* * * * *", job=shadow)


def test_two_entries_with_one_name_are_refused() -> None:
    """Names key the schedule, so they must be distinct."""
    with pytest.raises(ConfigError, match="periodic job 'tick': the name is used twice"):
        cogworker.Config(
            periodic=(
                Periodic(cron="* * * * *", job=jobs.Tick, name="tick"),
                Periodic(cron="0 * * * *", job=jobs.Sleeps, args=[1], name="tick"),
            )
        )
    with pytest.raises(ConfigError, match=r"not a cogworker\.Periodic"):
        cogworker.Config(periodic=("* * * * *",))  # type: ignore[arg-type]


def test_catch_up_settings_are_checked_and_may_come_from_a_file() -> None:
    """The catch-up mode is one of three, its limit positive; both and replace are file settings."""
    with pytest.raises(ConfigError, match="periodic_catch_up must be one of"):
        cogworker.Config(periodic_catch_up="some")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="catch_up_limit must be a whole number, 1 or more"):
        cogworker.Config(periodic_catch_up_limit=0)
    overridden = with_overrides(
        cogworker.Config(),
        {"periodic_catch_up": "all", "periodic_catch_up_limit": 3, "periodic_replace": False},
    )
    assert (overridden.periodic_catch_up, overridden.periodic_catch_up_limit) == ("all", 3)
    assert overridden.periodic_replace is False
