"""`Config`'s float settings (seconds, intervals, ages) are checked when a config is made:
NaN, an infinity or a bool is a `ConfigError` naming the setting.  NaN passed the
checks' comparisons (`nan <= 0` is false), for a worker to sleep or expire keys by it."""

from __future__ import annotations

import math

import attrs
import pytest

import cogworker

#: Every float setting of `Config`, read from its fields: a new one is checked here too.
FLOATS = [field.name for field in attrs.fields(attrs.resolve_types(cogworker.Config))
          if field.type in (float, float | None)]  # fmt: skip


def test_the_float_settings_are_found() -> None:
    """The settings this module checks include both kinds of check (above 0, 0 or more)."""
    assert {"poll_interval", "async_block_warning", "dead_max_age", "keep_result"} <= set(FLOATS)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True])
def test_a_float_setting_that_is_not_a_finite_number_is_refused_naming_it(
    name: str, value: object
) -> None:
    """Each wrong value is refused when the config is made, naming the setting and the value."""
    with pytest.raises(cogworker.ConfigError) as refused:
        cogworker.Config(**{name: value})

    assert str(refused.value).startswith(f"Config.{name} ")
    assert repr(value) in str(refused.value)


def test_no_block_warning_is_still_accepted() -> None:
    """0 is async_block_warning's "never"; only below 0 is refused."""
    assert cogworker.Config(async_block_warning=0).async_block_warning == 0
    with pytest.raises(cogworker.ConfigError, match=r"0 or more, got -0\.5"):
        cogworker.Config(async_block_warning=-0.5)
