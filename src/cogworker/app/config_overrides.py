"""A `Config` changed by plain settings: a `--config` TOML file's, the CLI's options, Django's
settings; each checked and named when it can't be taken."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from cogworker.app.config import Config
from cogworker.exceptions import ConfigError

#: The fields a `--config` TOML file may set (the rest are Python objects).
FILE_FIELDS = (
    "redis_url",
    "redis_username",
    "redis_password",
    "redis_tls_ca_file",
    "redis_tls_cert_file",
    "redis_tls_key_file",
    "redis_tls_verify",
    "redis_cluster",
    "sentinels",
    "sentinel_master",
    "sentinel_username",
    "sentinel_password",
    "min_replicas",
    "replica_timeout",
    "concurrency",
    "async_concurrency",
    "async_block_warning",
    "prefetch",
    "queues",
    "fetch",
    "poll_interval",
    "heartbeat_interval",
    "orphan_threshold",
    "max_orphanings",
    "max_handbacks",
    "shutdown_timeout",
    "default_timeout",
    "timeout_grace",
    "fetch_idle_max_interval",
    "dead_max_jobs",
    "dead_max_age",
    "unique_lock_ttl",
    "periodic_lock_ttl",
    "periodic_catch_up",
    "periodic_catch_up_limit",
    "periodic_replace",
    "track_status",
    "status_expiry",
    "history",
    "history_per_job",
    "history_per_class",
    "history_ttl",
    "metrics",
    "metrics_retention",
    "metrics_max_classes",
    "keep_result",
    "max_result_bytes",
    "job_modules",
    "log_level",
    "log_format",
)


def with_overrides(config: Config, overrides: Mapping[str, object]) -> Config:
    """`config` with the given fields replaced; unknown or non-file fields, and values of a
    type the field can't take, are a ConfigError naming them."""
    unknown = sorted(set(overrides) - set(FILE_FIELDS))
    if unknown:
        raise ConfigError(f"unknown config settings {unknown}; known: {list(FILE_FIELDS)}")
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
