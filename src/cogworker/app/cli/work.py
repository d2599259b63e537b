"""`cogworker work`: run a worker process (or a supervisor of several)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from cogworker.adapters import logs, whole_lines
from cogworker.app.cli.settings import (
    WORK_REDIS_URL_ENV,
    SettingError,
    check_redis_access,
    ensure_redis,
    redis_url_flag,
    with_redis_url,
    worker_config,
)
from cogworker.exceptions import CogworkerError, ConfigError, RedisRefusedError


@click.command()
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
        from cogworker.app.child_processes import worker_arguments
        from cogworker.app.supervisor import STOP_GRACE, Supervisor

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

    whole_lines.print_whole_lines()  # jobs on many threads print to them
    Manager(config, logger=logger, quiet=quiet, target=target).run()
