"""`Config`'s counts (its `int` settings) are checked when a config is made: a float, a
bool, a string or a number below the least allowed is a `ConfigError` naming the setting,
not a value whose first use fails far away (a scrape, a slice, a Lua script)."""

from __future__ import annotations

import attrs
import pytest

import cogworker

#: Every `int` setting of `Config`, read from its fields: a new count is checked here too.
COUNTS = [field.name for field in attrs.fields(attrs.resolve_types(cogworker.Config))
          if field.type is int]  # fmt: skip


def test_the_counts_are_found() -> None:
    """The settings this module checks include the ones #35 found unchecked."""
    assert {"metrics_max_classes", "concurrency", "prefetch"} <= set(COUNTS)


@pytest.mark.parametrize("name", COUNTS)
@pytest.mark.parametrize("value", [2.5, 3.0, float("nan"), True, "3", -1])
def test_a_count_that_is_not_a_whole_number_is_refused_naming_it(name: str, value: object) -> None:
    """Each wrong value is refused when the config is made, naming the setting and the value."""
    with pytest.raises(cogworker.ConfigError) as refused:
        cogworker.Config(**{name: value})

    assert f"Config.{name} must be a whole number" in str(refused.value)
    assert repr(value) in str(refused.value)


@pytest.mark.parametrize("name", COUNTS)
def test_each_counts_least_value_is_accepted(name: str) -> None:
    """Prefetch and async concurrency may be 0 (off); every other count starts at 1."""
    least = 0 if name in ("prefetch", "async_concurrency") else 1

    assert getattr(cogworker.Config(**{name: least}), name) == least
    with pytest.raises(cogworker.ConfigError, match=f"{least} or more"):
        cogworker.Config(**{name: least - 1})
