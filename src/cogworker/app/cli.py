"""The `cogworker` command: `work` runs a worker process, `serve` the dashboard."""

from __future__ import annotations

import importlib
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from cogworker.adapters import embedded_redis, logs, redis_access
from cogworker.adapters.connection import describe
from cogworker.app.config import DEFAULT_REDIS_URL, Config, check_redis_url, with_overrides
from cogworker.app.worker.stopping import SETTING_EXIT
from cogworker.exceptions import CogworkerError, ConfigError, RedisRefusedError

EMBEDDED_DATA_DIR = Path(".cogworker")


class SettingError(click.ClickException):
    """A setting that can't work: one line on stderr, exit status 2 (as click's usage errors)."""

    exit_code = SETTING_EXIT


def check_redis_access(config: Config, setting: str, *, writes: bool = True) -> None:
    """Raise RedisRefusedError, naming `setting`, if Redis refuses a worker for good
    (credentials, ACL permissions, database index); an unreachable Redis passes.
    `writes` False: only the credentials and the database index (a dashboard's needs)."""
    url = config.resolved_redis_url()
    refused = redis_access.refused_access(url, writes=writes)
    if refused is not None:
        raise RedisRefusedError(f"{setting} {describe(url)}: Redis refused {refused}")


def worker_config(app: str, config_file: Path | None, flags: dict[str, Any]) -> Config:
    """APP's config with the `--config` file's settings and the flags given over it."""
    given = {name: value for name, value in flags.items() if value not in (None, ())}
    if "redis_url" in given:
        check_redis_url("--redis-url", given["redis_url"])
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
    parts = urlsplit(default_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    pid = embedded_redis.start(host, port, data_dir)
    click.echo(
        f"cogworker: no Redis configured and none at {default_url}; started the embedded "
        f"Redis (pid {pid}, data in {data_dir.resolve()}/). Stop it with "
        f"`redis-cli -p {port} shutdown`.",
        err=True,
    )
    return True


@click.group()
@click.version_option("0.8.0", prog_name="cogworker")
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
@click.option("--redis-url", help="Redis to use (else the config's, else $COGWORKER_REDIS_URL).")
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
    **flags: Any,
) -> None:
    """Run a worker process for APP (`module` or `module:attr` holding a Config)."""
    try:
        config = worker_config(app, config_file, flags)
        ensure_redis(config)
        setting = "--redis-url" if flags.get("redis_url") else config.redis_url_setting()
        check_redis_access(config, setting)
    except (ConfigError, RedisRefusedError) as error:
        raise SettingError(str(error)) from None
    except CogworkerError as error:
        raise click.ClickException(str(error)) from None
    logger = logs.setup(config.log_level, config.log_format)
    if processes > 1 or max_memory is not None:
        # APP, config and Redis were checked above, once, before any child exists.
        from cogworker.app.supervisor import STOP_GRACE, Supervisor, worker_arguments

        arguments = worker_arguments(click.get_current_context(), ("processes", "max_memory"))
        command = [sys.executable, "-m", "cogworker", *arguments]
        Supervisor(
            command,
            processes,
            max_memory_mib=max_memory,
            kill_after=config.shutdown_timeout + STOP_GRACE,
            logger=logger,
        ).run()
        return
    from cogworker.app.worker.manager import Manager

    Manager(config, logger=logger, quiet=quiet).run()


@main.command()
@click.argument("app", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=7433, show_default=True, type=click.IntRange(1, 65535))
@click.option("--redis-url", help="Redis to show (else $COGWORKER_REDIS_URL, else the default).")
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
def serve(
    app: str | None,
    host: str,
    port: int,
    redis_url: str | None,
    root_path: str,
    auth: str | None,
    read_only: bool,
    allowed_hosts: tuple[str, ...],
) -> None:
    """Run the dashboard (on 127.0.0.1 unless told otherwise, and then only with --auth).

    APP (optional, as for `work`): its Config's death handlers run on Kill, its client
    middleware on Enqueue now."""
    import uvicorn

    from cogworker.app.web import BasicAuth, create_app, is_loopback
    from cogworker.app.web.security import LOOPBACK_NAMES

    if not is_loopback(host) and not auth:
        raise click.UsageError(
            f"refusing to serve the dashboard on {host} without --auth (or "
            "$COGWORKER_DASHBOARD_AUTH): anyone who can reach it could retry, delete and stop"
        )
    try:
        if redis_url:
            check_redis_url("--redis-url", redis_url)
        config = load_app(app) if app else Config()
        config = with_overrides(config, {"redis_url": redis_url}) if redis_url else config
        setting = "--redis-url" if redis_url else config.redis_url_setting()
        check_redis_access(config, setting, writes=False)
        credentials = BasicAuth.parse(auth) if auth else None
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
    uvicorn.run(dashboard, host=host, port=port, server_header=False, proxy_headers=False)
