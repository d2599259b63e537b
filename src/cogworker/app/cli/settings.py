"""What every command's settings come from: APP, a `--config` TOML file, the Redis URL
flags, and the checks that Redis takes this client, each error naming its setting."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import attrs
import click
from click.core import ParameterSource

from cogworker.adapters import embedded_redis, redis_access
from cogworker.adapters.redis_target import RedisTarget
from cogworker.app.cli.app_loading import load_app
from cogworker.app.config import Config
from cogworker.app.config_overrides import with_overrides
from cogworker.app.redis_settings import DEFAULT_REDIS_URL, parsed_url
from cogworker.app.worker.stopping import SETTING_EXIT
from cogworker.exceptions import ConfigError, RedisRefusedError

EMBEDDED_DATA_DIR = Path(".cogworker")
#: `--redis-url` of `cogworker work`, without a command line: how the supervisor
#: hands it to its children (a URL with a password would show in `ps`).
WORK_REDIS_URL_ENV = "COGWORKER_WORK_REDIS_URL"
Decorated = TypeVar("Decorated", bound=Callable[..., Any])


class SettingError(click.ClickException):
    """A setting that can't work: one line on stderr, exit status 2 (as click's usage errors)."""

    exit_code = SETTING_EXIT


def check_redis_access(target: RedisTarget, *, writes: bool = True) -> None:
    """Raise RedisRefusedError, naming the setting, if Redis refuses a worker for good
    (credentials, ACL permissions, database index, TLS certificate, master name); an
    unreachable Redis passes.  `writes` False: only connecting (a dashboard's needs)."""
    refused = redis_access.refused_access(target, writes=writes)
    if refused is not None:
        raise RedisRefusedError(f"{target.described()}: {refused}")


def redis_url_flag(url: str | None, url_file: Path | None) -> tuple[str, str] | None:
    """The Redis URL given by `--redis-url` (or its environment variable) or
    `--redis-url-file`, with the setting's name; None if neither was."""
    if url is not None and url_file is not None:
        raise click.UsageError("give --redis-url or --redis-url-file, not both")
    if url_file is not None:
        try:
            from_file = url_file.read_text().strip()
        except OSError as error:
            raise ConfigError(f"--redis-url-file {url_file}: {error}") from None
        return from_file, f"--redis-url-file {url_file}"
    if url is None:
        return None
    source = click.get_current_context().get_parameter_source("redis_url")
    from_environment = source is ParameterSource.ENVIRONMENT
    return url, f"${WORK_REDIS_URL_ENV}" if from_environment else "--redis-url"


def with_redis_url(config: Config, flag: tuple[str, str] | None) -> tuple[Config, RedisTarget]:
    """`config` pointed at the flag's URL, if one was given (it replaces the APP's URL or
    sentinels), and its target, named by the setting it came from."""
    if flag is None:
        return config, config.redis_target()
    url, setting = flag
    parsed_url(setting, url)  # the flag's own error, naming it
    config = with_overrides(config, {"redis_url": url, "sentinels": (), "sentinel_master": None})
    return config, attrs.evolve(config.redis_target(), setting=setting)


def worker_config(app: str, config_file: Path | None, flags: dict[str, Any]) -> Config:
    """APP's config with the `--config` file's settings and the flags given over it
    (all but the Redis URL's: see `with_redis_url`)."""
    given = {name: value for name, value in flags.items() if value not in (None, ())}
    config = load_app(app)
    if config_file is not None:
        config = with_overrides(config, read_config_file(config_file))
    return with_overrides(config, given)


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a `--config` TOML file (top level, or its `[cogworker]` table)."""
    import tomllib  # here: a worker started without --config never needs it

    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"--config {path}: {error}") from None
    table = data.get("cogworker", data)
    if isinstance(table.get("queues"), list):
        table["queues"] = tuple(table["queues"])
    return dict(table)


def ensure_redis(
    config: Config, *, default_url: str = DEFAULT_REDIS_URL, data_dir: Path = EMBEDDED_DATA_DIR
) -> bool:
    """Start the embedded Redis at `default_url` if nothing is configured or answers there.

    A configured Redis that doesn't answer is left as it is: the worker
    says so and keeps trying, never swapping in another.  True if started.
    """
    if config.redis_is_configured() or embedded_redis.answers(default_url):
        return False
    default = parsed_url("the default Redis URL", default_url)
    pid = embedded_redis.start(default.host, default.port, data_dir)
    click.echo(
        f"cogworker: no Redis configured and none at {default_url}; started the embedded "
        f"Redis (pid {pid}, data in {data_dir.resolve()}/). Stop it with "
        f"`redis-cli -p {default.port} shutdown`.",
        err=True,
    )
    return True


def settings_of(
    app: str | None, config_file: Path | None, flag: tuple[str, str] | None
) -> tuple[Config, RedisTarget]:
    """The config of an inspecting command: APP's (else the defaults), the `--config`
    file's settings over it, pointed at the flag's Redis; and its target."""
    config = load_app(app) if app else Config()
    if config_file is not None:
        config = with_overrides(config, read_config_file(config_file))
    return with_redis_url(config, flag)


def redis_url_options(command: Decorated) -> Decorated:
    """`--redis-url` and `--redis-url-file`, as `serve` and the inspecting commands take them."""
    command = click.option(
        "--redis-url-file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="A file holding the Redis URL (as --redis-url).",
    )(command)
    return click.option(
        "--redis-url",
        help="Redis to use, over APP's (else $COGWORKER_REDIS_URL, else the default); prefer "
        "--redis-url-file or $COGWORKER_REDIS_URL for a URL with a password.",
    )(command)
