"""A `Config` changed by plain settings: a `--config` TOML file's, the CLI's options, Django's
settings; each checked and named when it can't be taken."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from cogworker.app.config import Config
from cogworker.exceptions import ConfigError

#: The `Config` fields of Python objects (periodic jobs, middleware, hooks): a file can't
#: hold them.  Every other field is a plain setting a file may set.
OBJECT_FIELDS = ("periodic", "client_middleware", "server_middleware", "death_handlers")


def file_fields(config_class: type[Config] = Config) -> tuple[str, ...]:
    """The fields a `--config` TOML file may set: every field of `config_class` but the
    `OBJECT_FIELDS`, in the class's order (so a new field is settable from a file)."""
    return tuple(
        field.name for field in attrs.fields(config_class) if field.name not in OBJECT_FIELDS
    )


#: The fields a `--config` TOML file may set, of `Config` itself.
FILE_FIELDS = file_fields()


def with_overrides(config: Config, overrides: Mapping[str, object]) -> Config:
    """`config` with the given fields replaced; unknown or non-file fields, and values of a
    type the field can't take, are a ConfigError naming them."""
    known = file_fields(type(config))
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise ConfigError(f"unknown config settings {unknown}; known: {list(known)}")
    try:
        return attrs.evolve(config, **overrides)  # type: ignore[arg-type]  # the validators check
    except (TypeError, ValueError) as error:
        # A value of the wrong type breaks a validator or converter, whose error can't
        # say which field it was at: the settings refused on their own are the ones.
        wrong = [name for name, value in overrides.items() if not _takes(config, name, value)]
        raise ConfigError(f"{', '.join(f'Config.{name}' for name in wrong)}: {error}") from None


def _takes(config: Config, name: str, value: object) -> bool:
    """Whether field `name` of `config` takes `value` as far as its type goes."""
    try:
        attrs.evolve(config, **{name: value})  # type: ignore[arg-type]  # what is checked
    except (TypeError, ValueError):
        return False
    except ConfigError:
        return True  # a refused value, or one that only fits with the other settings
    return True
