"""What the inspecting commands share: their options, the dashboard's store on the Redis
they name, and how errors and outcomes become exit statuses.

Exit statuses: 0 done; 1 a job, queue or process not found, or an action
refused (or Redis unreachable); 2 a usage error or a setting that can't work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import click
import redis

from cogworker.adapters.connection import connect
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.adapters.redis_client import RedisClient
from cogworker.app.cli.settings import (
    SettingError,
    check_redis_access,
    redis_url_flag,
    redis_url_options,
    settings_of,
)
from cogworker.app.config import Config
from cogworker.exceptions import ConfigError, RedisRefusedError

#: The exit status of a job, queue or process not found, or of an action refused.
NOT_DONE = 1


@attrs.define
class Session:
    """One inspecting command's config, its Redis (as the dashboard's store) and how it
    answers (`as_json`: one JSON document on stdout, for scripts)."""

    config: Config
    redis: RedisClient
    store: DashboardStore
    as_json: bool


Command = Callable[..., bool]


def inspecting(command: Command) -> Callable[..., None]:
    """Give `command` a `Session` (first argument) from the options every inspecting command
    takes (`--app`, `--config`, `--redis-url`, `--redis-url-file`, `--json`); a command
    returning False exits 1."""

    @click.option("--json", "as_json", is_flag=True, help="Answer with one JSON document.")
    @click.option(
        "--config", "config_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="A TOML file of settings (as for `work`), applied over APP's config.",
    )  # fmt: skip
    @click.option(
        "--app", metavar="APP",
        help="`module` or `module:attr` holding a Config (as for `work`): its Redis settings, "
        "death handlers (run on kill) and client middleware (run on enqueue).",
    )  # fmt: skip
    @redis_url_options
    @functools.wraps(command)
    def run(
        app: str | None,
        config_file: Path | None,
        redis_url: str | None,
        redis_url_file: Path | None,
        as_json: bool,
        **arguments: Any,
    ) -> None:
        session = _open(app, config_file, redis_url_flag(redis_url, redis_url_file), as_json)
        try:
            done = command(session, **arguments)
        except (redis.ConnectionError, redis.TimeoutError) as error:
            raise click.ClickException(f"can't reach Redis: {error}") from None
        finally:
            session.redis.close()
        if not done:
            click.get_current_context().exit(NOT_DONE)

    return run


def _open(
    app: str | None, config_file: Path | None, flag: tuple[str, str] | None, as_json: bool
) -> Session:
    """The session of the options given; a setting that can't work exits 2, naming it."""
    try:
        config, target = settings_of(app, config_file, flag)
        check_redis_access(target, writes=False)
    except (ConfigError, RedisRefusedError) as error:
        raise SettingError(str(error)) from None
    client = connect(target)
    store = DashboardStore.on(client, config.retention)
    if not store.answers():
        client.close()
        raise click.ClickException(f"can't reach Redis at {target.label}")
    return Session(config=config, redis=client, store=store, as_json=as_json)
