"""The `cogworker` command: `work` runs a worker process, `serve` the dashboard."""

from __future__ import annotations

import importlib
import os
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click
from click.core import ParameterSource

from cogworker.adapters import embedded_redis, logs, redis_access
from cogworker.adapters.redis_target import RedisTarget
from cogworker.app.config import Config, with_overrides
from cogworker.app.redis_settings import DEFAULT_REDIS_URL, parsed_url
from cogworker.app.version import VERSION
from cogworker.app.worker.stopping import SETTING_EXIT
from cogworker.exceptions import CogworkerError, ConfigError, RedisRefusedError

if TYPE_CHECKING:  # the dashboard's modules import Litestar: a worker never loads them
    from cogworker.app.web.security import BasicAuth

EMBEDDED_DATA_DIR = Path(".cogworker")
#: `--redis-url` of `cogworker work`, without a command line: how the supervisor
#: hands it to its children (a URL with a password would show in `ps`).
WORK_REDIS_URL_ENV = "COGWORKER_WORK_REDIS_URL"


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


def load_app(spec: str) -> Config:
    """The `Config` named by APP: `module` (its `config` attribute) or `module:attr`."""
    module_name, _, attribute = spec.partition(":")
    sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"APP {spec!r}: can't import {module_name}: {error}") from None
    value = getattr(module, attribute or "config", None)
    if not isinstance(value, Config):
        found = "nothing" if value is None else type(value).__name__
        raise ConfigError(
            f"APP {spec!r}: expected a cogworker.Config at {attribute or 'config'}, found {found}"
        )
    return value


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a `--config` TOML file (top level, or its `[cogworker]` table)."""
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


@click.group()
@click.version_option(VERSION, prog_name="cogworker")
def main() -> None:
    """cogworker: reliable background jobs on Redis."""


@main.command()
@click.argument("app")
@click.option("-c", "--concurrency", type=click.IntRange(min=1), help="Jobs run at once.")
@click.option(
    "--async-concurrency", type=click.IntRange(min=0),
    help="async def jobs run at once on the event loop (0: none).",
)  # fmt: skip
@click.option(
    "--prefetch", type=click.IntRange(min=0),
    help="Jobs fetched ahead of free threads (short jobs share round trips).",
)  # fmt: skip
@click.option(
    "-q", "--queue", "queues", multiple=True, metavar="NAME[,WEIGHT]",
    help="A queue to serve (repeatable); weights make the order weighted-random.",
)  # fmt: skip
@click.option(
    "--redis-url", envvar=WORK_REDIS_URL_ENV,
    help="Redis to use, over the config's (else $COGWORKER_REDIS_URL); prefer "
    f"${WORK_REDIS_URL_ENV} or --redis-url-file for a URL with a password (a flag shows in `ps`).",
)  # fmt: skip
@click.option(
    "--redis-url-file", type=click.Path(dir_okay=False, path_type=Path),
    help="A file holding the Redis URL (as --redis-url).",
)  # fmt: skip
@click.option(
    "--config", "config_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A TOML file of settings, applied over APP's config.",
)  # fmt: skip
@click.option("--log-level", type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"]))
@click.option("--log-format", type=click.Choice(["text", "json"]))
@click.option(
    "--processes", type=click.IntRange(min=1), default=1, show_default=True,
    help="Worker processes to run under a supervisor that restarts them (command line only; "
    "1: this process is the worker).",
)  # fmt: skip
@click.option(
    "--max-memory", type=click.IntRange(min=1), metavar="MIB",
    help="Recycle (SIGTERM, drain, replace) a worker process whose RSS goes above MIB; "
    "runs the supervisor even with --processes 1.",
)  # fmt: skip
@click.option(
    "--paused", "--quiet", "quiet", is_flag=True,
    help="Start paused: register and show on the dashboard (as quiet), but take no job "
    "until resumed (the dashboard's Resume).  --quiet is the same.",
)  # fmt: skip
def work(
    app: str,
    config_file: Path | None,
    processes: int,
    max_memory: int | None,
    quiet: bool,
    redis_url: str | None,
    redis_url_file: Path | None,
    **flags: Any,
) -> None:
    """Run a worker process for APP (`module` or `module:attr` holding a Config)."""
    try:
        flag = redis_url_flag(redis_url, redis_url_file)
        config, target = with_redis_url(worker_config(app, config_file, flags), flag)
        ensure_redis(config)
        check_redis_access(target)
    except (ConfigError, RedisRefusedError) as error:
        raise SettingError(str(error)) from None
    except CogworkerError as error:
        raise click.ClickException(str(error)) from None
    logger = logs.setup(config.log_level, config.log_format)
    if processes > 1 or max_memory is not None:
        # APP, config and Redis were checked above, once, before any child exists.
        from cogworker.app.supervisor import STOP_GRACE, Supervisor, worker_arguments

        # The URL goes to the children in their environment, never on their command line.
        own = ("processes", "max_memory", "redis_url", "redis_url_file")
        arguments = worker_arguments(click.get_current_context(), own)
        command = [sys.executable, "-m", "cogworker", *arguments]
        environment = dict(os.environ)
        if flag is not None:
            environment[WORK_REDIS_URL_ENV] = flag[0]
        Supervisor(
            command,
            processes,
            environment=environment,
            max_memory_mib=max_memory,
            kill_after=config.shutdown_timeout + STOP_GRACE,
            logger=logger,
        ).run()
        return
    from cogworker.app.worker.manager import Manager

    Manager(config, logger=logger, quiet=quiet, target=target).run()


@main.command()
@click.argument("app", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=7433, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--redis-url",
    help="Redis to show, over APP's (else $COGWORKER_REDIS_URL, else the default); prefer "
    "--redis-url-file or $COGWORKER_REDIS_URL for a URL with a password.",
)
@click.option(
    "--redis-url-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A file holding the Redis URL (as --redis-url).",
)
@click.option(
    "--root-path", default="", metavar="PATH",
    help="The path the dashboard is served under behind a proxy, like /jobs.",
)  # fmt: skip
@click.option(
    "--auth", envvar="COGWORKER_DASHBOARD_AUTH", metavar="USER:PASSWORD",
    help="HTTP basic auth; prefer $COGWORKER_DASHBOARD_AUTH (a flag shows in `ps`).",
)  # fmt: skip
@click.option("--read-only", is_flag=True, help="Show everything, change nothing.")
@click.option(
    "--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
    help="Without auth, a host name to answer to besides the bound address and localhost "
    "(repeatable); any other Host is refused (DNS rebinding).",
)  # fmt: skip
@click.option(
    "--trust-proxy", "trusted_proxies", multiple=True, metavar="ADDRESS",
    help="The address of a reverse proxy in front of the dashboard (repeatable): its "
    "X-Forwarded-Proto and X-Forwarded-For are believed (HTTPS, the client's address).",
)  # fmt: skip
def serve(
    app: str | None,
    host: str,
    port: int,
    redis_url: str | None,
    redis_url_file: Path | None,
    root_path: str,
    auth: str | None,
    read_only: bool,
    allowed_hosts: tuple[str, ...],
    trusted_proxies: tuple[str, ...],
) -> None:
    """Run the dashboard (on 127.0.0.1 unless told otherwise, and then only with --auth).

    APP (optional, as for `work`): its Config's death handlers run on Kill, its client
    middleware on Enqueue now."""
    import uvicorn

    from cogworker.app.web import create_app
    from cogworker.app.web.security import LOOPBACK_NAMES

    credentials = dashboard_credentials(host, auth)
    try:
        flag = redis_url_flag(redis_url, redis_url_file)
        config, target = with_redis_url(load_app(app) if app else Config(), flag)
        check_redis_access(target, writes=False)
        dashboard = create_app(
            config,
            auth=credentials,
            read_only=read_only,
            root_path=root_path,
            # With auth another site can't get in whatever its name; without, only names
            # that are this machine's or the operator's are answered.
            allowed_hosts=None if auth else {host, *LOOPBACK_NAMES, *allowed_hosts},
        )
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    except (ConfigError, RedisRefusedError) as error:
        raise SettingError(str(error)) from None
    click.echo(
        f"cogworker: dashboard on http://{host}:{port}{dashboard.root_path or '/'}", err=True
    )
    uvicorn.run(
        dashboard,
        host=host,
        port=port,
        server_header=False,
        # Only a named proxy's X-Forwarded-* are believed: a client's own would let it
        # claim HTTPS, or a new address for each guess at the password.
        proxy_headers=bool(trusted_proxies),
        forwarded_allow_ips=list(trusted_proxies) or None,
    )


def dashboard_credentials(host: str, auth: str | None) -> BasicAuth | None:
    """`--auth` as credentials; refused if missing, or too short, on an address other than
    loopback (anyone who can reach it could retry, delete and stop)."""
    from cogworker.app.web import BasicAuth, is_loopback
    from cogworker.app.web.security import MIN_PASSWORD_LENGTH

    if not is_loopback(host) and not auth:
        raise click.UsageError(
            f"refusing to serve the dashboard on {host} without --auth (or "
            "$COGWORKER_DASHBOARD_AUTH): anyone who can reach it could retry, delete and stop"
        )
    try:
        credentials = BasicAuth.parse(auth) if auth else None
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="'--auth'") from None
    if credentials and not is_loopback(host) and len(credentials.password) < MIN_PASSWORD_LENGTH:
        raise SettingError(
            f"refusing to serve the dashboard on {host} with a password of "
            f"{len(credentials.password)} characters: use {MIN_PASSWORD_LENGTH} or more, "
            "as anyone who can reach it may guess"
        )
    return credentials
