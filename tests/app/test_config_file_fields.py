"""What a `--config` file may set is derived from `Config`, not kept by hand."""

from __future__ import annotations

import attrs
import pytest

from cogworker import Config
from cogworker.app.config_overrides import FILE_FIELDS, OBJECT_FIELDS, with_overrides
from cogworker.exceptions import ConfigError


@attrs.frozen(kw_only=True)
class ConfigWithNewField(Config):
    """`Config` as it would be with one more plain field, which no list names."""

    new_setting: int = 1


def test_a_new_field_is_settable_from_a_file() -> None:
    """A field added to the class is taken from a file's settings with no list edited."""
    changed = with_overrides(ConfigWithNewField(), {"new_setting": 5, "concurrency": 3})
    assert isinstance(changed, ConfigWithNewField)
    assert (changed.new_setting, changed.concurrency) == (5, 3)


def test_every_plain_field_is_a_file_field() -> None:
    """The file fields are the class's fields but the object ones, which all exist."""
    names = [field.name for field in attrs.fields(Config)]
    assert set(OBJECT_FIELDS) <= set(names)
    assert list(FILE_FIELDS) == [name for name in names if name not in OBJECT_FIELDS]


def test_an_object_field_is_refused_by_name() -> None:
    """A file can't set a field of Python objects: the error names it and the known ones."""
    with pytest.raises(ConfigError, match=r"unknown config settings \['death_handlers'\]"):
        with_overrides(Config(), {"death_handlers": ["shop.jobs.tell_ops"]})
