"""The `Config` of a Django project: `settings.COGWORKER`, a dict of `Config` fields.

::

    COGWORKER = {
        "redis_url": "redis://127.0.0.1:6379/0",
        "queues": ["critical", "default"],
        "death_handlers": ["shop.jobs.tell_ops"],
    }

Its keys are the plain fields a `--config` file sets (`FILE_FIELDS`) and
the fields that hold Python objects (`OBJECT_FIELDS`).  An item of those
may be the object or its dotted path: a settings module can't import app
code (the apps aren't loaded yet), so paths are imported when this is
called, from the app's `ready()` or the worker's APP.  A mistake is an
`ImproperlyConfigured` naming the key, when Django starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from cogworker.app.config import Config
from cogworker.app.config_overrides import FILE_FIELDS, OBJECT_FIELDS, with_overrides
from cogworker.exceptions import ConfigError

SETTING = "COGWORKER"


def config_from_settings() -> Config:
    """The `Config` that `settings.COGWORKER` describes (the default one without it)."""
    given = getattr(settings, SETTING, {})
    if not isinstance(given, Mapping):
        raise ImproperlyConfigured(
            f"settings.{SETTING} must be a dict of cogworker.Config fields, "
            f"got {type(given).__name__}"
        )
    unknown = sorted(set(given) - {*FILE_FIELDS, *OBJECT_FIELDS})
    if unknown:
        raise ImproperlyConfigured(
            f"settings.{SETTING}: unknown keys {unknown}; known: {[*FILE_FIELDS, *OBJECT_FIELDS]}"
        )
    objects = {name: _imported(name, given[name]) for name in OBJECT_FIELDS if name in given}
    plain = {name: value for name, value in given.items() if name not in OBJECT_FIELDS}
    try:
        with_objects = attrs.evolve(Config(), **objects)  # type: ignore[arg-type]  # Config checks
        return with_overrides(with_objects, plain)
    except ConfigError as error:
        raise ImproperlyConfigured(f"settings.{SETTING}: {error}") from None


def _imported(name: str, items: object) -> tuple[object, ...]:
    """The items of an object field, each dotted path replaced by what it names."""
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise ImproperlyConfigured(f"settings.{SETTING}[{name!r}] must be a list, got {items!r}")
    return tuple(_import(name, item) if isinstance(item, str) else item for item in items)


def _import(name: str, path: str) -> object:
    try:
        return import_string(path)
    except ImportError as error:
        raise ImproperlyConfigured(
            f"settings.{SETTING}[{name!r}]: can't import {path!r}: {error}"
        ) from None
