"""Redis settings read on their own: a URL parsed (a ConfigError naming its setting,
never its password), the sentinels' addresses, the names of the settings.

`Config.redis_target()` (`app/config.py`) puts them together with the other Redis
fields into the one `RedisTarget` every connection uses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from cogworker.adapters import redis_target
from cogworker.adapters.redis_target import RedisTarget, Tls
from cogworker.exceptions import ConfigError

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
REDIS_URL_ENV = "COGWORKER_REDIS_URL"
#: A URL option whose value is a secret, up to the next option.
SECRET_OPTION = re.compile(r"(sentinel_password=)[^&]*")
#: The Config fields of TLS, by the `Tls` field each sets (`redis_tls_` and its name).
TLS_FIELDS = {field.name: f"redis_tls_{field.name}" for field in attrs.fields(Tls)}


def parsed_url(setting: str, url: str) -> RedisTarget:
    """The target `url` names; a ConfigError naming `setting` (and never the password)."""
    try:
        return redis_target.parse(url, setting)
    except ValueError as error:
        raise ConfigError(f"{setting} {masked(url)!r}: {error}") from None


def masked(url: str) -> str:
    """`url` with its passwords (the user's, the sentinels' option) replaced by `***`."""
    scheme, sep, rest = url.partition("://")
    # First the option, whose '@' would otherwise pass for the end of the credentials.
    rest = SECRET_OPTION.sub(r"\1***", rest)
    credentials, at, host = rest.rpartition("@")
    if not at:
        return f"{scheme}{sep}{rest}"
    user = credentials.partition(":")[0]
    return f"{scheme}{sep}{user + ':***' if user else '***'}@{host}"


def sentinel_addresses(value: object) -> tuple[tuple[str, int], ...]:
    """`Config.sentinels` as (host, port) pairs; a ConfigError for anything else."""
    pairs = tuple(tuple(pair) for pair in value) if isinstance(value, Iterable) else None
    valid = pairs is not None and all(
        len(pair) == 2
        and isinstance(pair[0], str)
        and pair[0]
        and isinstance(pair[1], int)
        and 0 < pair[1] < 65536
        for pair in pairs
    )
    if not valid:
        raise ConfigError(
            f"Config.sentinels: (host, port) pairs, like (('10.0.0.1', 26379),), not {value!r}"
        )
    return pairs  # type: ignore[return-value]  # checked just above
