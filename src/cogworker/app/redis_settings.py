"""From a `Config`'s Redis settings to the one `RedisTarget` every connection uses.

The URL (`Config.redis_url`, else `$COGWORKER_REDIS_URL`, else the
default) says where; `Config.sentinels` with `sentinel_master` says it
instead.  `Config.redis_cluster` makes a redis:// or rediss:// URL's server
the start-up node of a Redis Cluster (a redis+cluster:// URL says so itself).
The other Redis fields complete it, and a field given wins over
the same part of the URL (its password, a TLS option).  Whatever can't
work is a ConfigError naming the setting, before anything connects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from cogworker.adapters import redis_target
from cogworker.adapters.redis_target import RedisTarget, Sentinels, Tls
from cogworker.exceptions import ConfigError

if TYPE_CHECKING:
    from cogworker.app.config import Config

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


def url_and_setting(config: Config) -> tuple[str, str]:
    """The Redis URL in use and where it comes from, as a person would set it."""
    if config.redis_url:
        return config.redis_url, "Config.redis_url"
    from_environment = os.environ.get(REDIS_URL_ENV)
    if from_environment:
        return from_environment, f"${REDIS_URL_ENV}"
    return DEFAULT_REDIS_URL, "the default Redis URL"


def check_sentinel_fields(config: Config) -> None:
    """Raise ConfigError if `Config.sentinels` and its companions don't fit together."""
    if config.sentinels and config.redis_url:
        raise ConfigError("Config.redis_url and Config.sentinels both say where Redis is: give one")
    if bool(config.sentinels) != bool(config.sentinel_master):
        raise ConfigError(
            "Config.sentinels and Config.sentinel_master go together (a redis+sentinel:// "
            "URL names its master itself)"
        )


def target_of(config: Config) -> RedisTarget:
    """The Redis `config` names, completed by its Redis fields."""
    if config.sentinels:
        sentinels = Sentinels(addresses=config.sentinels, master=config.sentinel_master or "")
        target = RedisTarget(setting="Config.sentinels", sentinels=sentinels)
    else:
        url, setting = url_and_setting(config)
        target = parsed_url(setting, url)
    if config.redis_cluster:
        target = _as_cluster(target)
    target = attrs.evolve(
        target,
        username=_given(config.redis_username, target.username),
        password=_given(config.redis_password, target.password),
    )
    target = _with_replication(target, config)
    return _with_sentinel_credentials(_with_tls(target, config), config)


def _as_cluster(target: RedisTarget) -> RedisTarget:
    """`target`'s server as a cluster's start-up node (`Config.redis_cluster`)."""
    if target.sentinels is not None or target.path is not None:
        raise ConfigError(
            f"Config.redis_cluster needs a redis:// or rediss:// URL naming one of the "
            f"cluster's nodes, not {target.described()}"
        )
    if target.db != 0:
        raise ConfigError(
            f"Config.redis_cluster: a Redis Cluster has only database 0, not {target.db} "
            f"({target.described()})"
        )
    return attrs.evolve(target, cluster=target.cluster or ((target.host, target.port),))


def _given(field: Any, from_url: Any) -> Any:
    return from_url if field is None else field


def _with_replication(target: RedisTarget, config: Config) -> RedisTarget:
    replication = attrs.evolve(
        target.replication,
        replicas=_given(config.min_replicas, target.replication.replicas),
        timeout=_given(config.replica_timeout, target.replication.timeout),
    )
    return attrs.evolve(target, replication=replication)


def _with_tls(target: RedisTarget, config: Config) -> RedisTarget:
    given = {
        name: getattr(config, field)
        for name, field in TLS_FIELDS.items()
        if getattr(config, field) is not None
    }
    if not given:
        return target
    if target.tls is None and not config.sentinels:
        field = TLS_FIELDS[next(iter(given))]
        raise ConfigError(
            f"Config.{field} is set, but {target.described()} doesn't use TLS "
            "(rediss:// or rediss+sentinel://)"
        )
    return attrs.evolve(target, tls=attrs.evolve(target.tls or Tls(), **given))


def _with_sentinel_credentials(target: RedisTarget, config: Config) -> RedisTarget:
    if config.sentinel_username is None and config.sentinel_password is None:
        return target
    if target.sentinels is None:
        raise ConfigError(
            f"Config.sentinel_username / sentinel_password are set, but {target.described()} "
            "names no sentinels (redis+sentinel://HOST:PORT,.../MASTER)"
        )
    sentinels = attrs.evolve(
        target.sentinels,
        username=_given(config.sentinel_username, target.sentinels.username),
        password=_given(config.sentinel_password, target.sentinels.password),
    )
    return attrs.evolve(target, sentinels=sentinels)
