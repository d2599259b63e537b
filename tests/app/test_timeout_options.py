"""Time limits as given: `timeout=` as a class option (inherited, overridable) and
`Config.default_timeout`/`timeout_grace`; a value that can't be a limit is refused where
it is given, naming it; a running job's live record carries its limit."""

from __future__ import annotations

import json
import math

import attrs
import pytest

import cogworker
from cogworker.app.config_overrides import with_overrides
from cogworker.app.worker.state import RunningJob

BAD_SECONDS = [0, -5, -0.5, math.nan, math.inf, -math.inf, "60", True, [1]]


class Limited(cogworker.Job, timeout=30):
    """A class whose runs may take 30 s."""

    def perform(self) -> None:
        """Nothing."""


class Inherits(Limited):
    """A subclass that says nothing of its limit."""


class Overrides(Limited, timeout=2.5):
    """A subclass with a limit of its own."""


@pytest.mark.parametrize("value", BAD_SECONDS)
def test_a_class_refuses_a_timeout_that_is_no_positive_number(value: object) -> None:
    """timeout= at class definition: TypeError naming the class and the value."""
    with pytest.raises(TypeError, match="timeout") as refused:

        class Bad(cogworker.Job, timeout=value):  # type: ignore[arg-type]  # on purpose
            def perform(self) -> None: ...

    assert "Bad" in str(refused.value)
    assert repr(value) in str(refused.value)


def test_a_timeout_is_inherited_and_overridable() -> None:
    """A subclass keeps its base's limit unless it gives its own; a class without one has
    none (the config's default applies)."""
    assert Limited.cogworker_options.timeout == 30
    assert Inherits.cogworker_options.timeout == 30
    assert Overrides.cogworker_options.timeout == 2.5
    assert cogworker.Job.cogworker_options.timeout is None


@pytest.mark.parametrize("field", ["default_timeout", "timeout_grace"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_the_config_refuses_a_limit_that_is_no_positive_number(field: str, value: object) -> None:
    """Config(default_timeout=..., timeout_grace=...), and the same from a config file: a
    ConfigError naming the field and the value."""
    with pytest.raises(cogworker.ConfigError, match=f"Config.{field}") as refused:
        cogworker.Config(**{field: value})  # type: ignore[arg-type]  # on purpose
    assert repr(value) in str(refused.value)
    with pytest.raises(cogworker.ConfigError, match=f"Config.{field}"):
        with_overrides(cogworker.Config(), {field: value})


def test_the_config_defaults_to_no_limit_and_a_ten_second_grace() -> None:
    """No limit unless one is set (as before); a limit, once set, is kept as given."""
    config = cogworker.Config()
    assert (config.default_timeout, config.timeout_grace) == (None, 10.0)
    changed = with_overrides(config, {"default_timeout": 300, "timeout_grace": 0.5})
    assert (changed.default_timeout, changed.timeout_grace) == (300, 0.5)
    assert attrs.evolve(changed, default_timeout=None).default_timeout is None


def test_the_live_record_of_a_limited_job_carries_its_limit() -> None:
    """The heartbeat's record of a running job says its limit in seconds, only if it has one."""
    raw = json.dumps({"class": "app.Job", "queue": "q", "jid": "j1", "args": []}).encode()
    unlimited = json.loads(RunningJob("j1", "app.Job", "q", raw, 1.0).to_json())
    limited = json.loads(RunningJob("j1", "app.Job", "q", raw, 1.0, 30.0).to_json())
    assert "timeout" not in unlimited
    assert limited["timeout"] == 30.0
    assert {key: value for key, value in limited.items() if key != "timeout"} == unlimited


def test_the_timeout_error_is_a_cogworker_error() -> None:
    """Exported where users catch errors, under the one base class."""
    assert issubclass(cogworker.JobTimeoutError, cogworker.CogworkerError)
    assert cogworker.exceptions.JobTimeoutError is cogworker.JobTimeoutError
