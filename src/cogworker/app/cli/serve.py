"""`cogworker serve`: run the dashboard, refusing settings that would expose it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cogworker.app.cli.app_loading import load_app
from cogworker.app.cli.settings import (
    SettingError,
    check_redis_access,
    redis_url_flag,
    redis_url_options,
    with_redis_url,
)
from cogworker.app.config import Config
from cogworker.exceptions import ConfigError, RedisRefusedError

if TYPE_CHECKING:  # the dashboard's modules import Litestar: a worker never loads them
    from cogworker.app.web.security import BasicAuth


@click.command()
@click.argument("app", required=False)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=7433, show_default=True, type=click.IntRange(1, 65535))
@redis_url_options
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
@click.option(
    "--metrics-port", type=click.IntRange(1, 65535), metavar="N",
    help="Also serve /metrics (Prometheus) on 127.0.0.1:N, without auth (the dashboard's "
    "/metrics keeps its auth).",
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
    metrics_port: int | None,
) -> None:
    """Run the dashboard (on 127.0.0.1 unless told otherwise, and then only with --auth).

    APP (optional, as for `work`): its Config's death handlers run on Kill, its client
    middleware on Enqueue now."""
    import uvicorn

    from cogworker.app.web import create_app
    from cogworker.app.web.security import LOOPBACK_NAMES

    credentials = dashboard_credentials(host, auth)
    if metrics_port == port:
        raise click.BadParameter("give the metrics their own port", param_hint="'--metrics-port'")
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
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "server_header": False,
        # Only a named proxy's X-Forwarded-* are believed: a client's own would let it
        # claim HTTPS, or a new address for each guess at the password.
        "proxy_headers": bool(trusted_proxies),
        "forwarded_allow_ips": list(trusted_proxies) or None,
    }
    if metrics_port is None:
        uvicorn.run(dashboard, **options)
        return
    from cogworker.app.web.metrics_port import METRICS_HOST, serve_with_metrics_port

    click.echo(f"cogworker: metrics on http://{METRICS_HOST}:{metrics_port}/metrics", err=True)
    serve_with_metrics_port(dashboard, metrics_port, **options)


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
