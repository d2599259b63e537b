"""The APP of `cogworker work` for a Django project::

    DJANGO_SETTINGS_MODULE=mysite.settings cogworker work cogworker.contrib.django.worker

Importing it sets Django up (settings, apps, models), so job modules may
use the ORM, and makes `config`: `settings.COGWORKER`'s `Config` with
`close_stale_connections` outermost in its server middleware.
"""

from __future__ import annotations

import os

import attrs
import django
from django.core.exceptions import ImproperlyConfigured

from cogworker.app.config import Config
from cogworker.app.middleware import ServerMiddleware
from cogworker.contrib.django.db_connections import close_stale_connections
from cogworker.contrib.django.settings_config import config_from_settings
from cogworker.exceptions import ConfigError


def django_worker_config() -> Config:
    """Set Django up and give the worker's `Config`; a ConfigError (`cogworker work`'s one
    line, exit status 2) when the settings can't work."""
    if not os.environ.get("DJANGO_SETTINGS_MODULE"):
        raise ConfigError(
            f"{__name__}: set DJANGO_SETTINGS_MODULE to your project's settings module "
            "(as manage.py does), e.g. DJANGO_SETTINGS_MODULE=mysite.settings"
        )
    try:
        django.setup()
        config = config_from_settings()
    except ImproperlyConfigured as error:
        raise ConfigError(f"Django: {error}") from None
    middleware: tuple[ServerMiddleware, ...] = (close_stale_connections, *config.server_middleware)
    # attrs' mypy plugin types the `tuple` converter's parameter as an unsolved Iterable[_T_co].
    return attrs.evolve(config, server_middleware=middleware)  # type: ignore[arg-type]


config = django_worker_config()
