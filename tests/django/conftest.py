"""A real Django project on SQLite for the integration's tests, set up in this process once.

The project (tests/django/project) is copied to a temporary directory,
where its databases live and its workers run; this process sets Django up
with its settings and makes the tables.  Workers get the same settings
through their environment (`shop_environment`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import django
import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import call_command

import cogworker
from cogworker.app import default_clients
from tests.support.processes import CogworkerFactory, CogworkerProcess
from tests.support.redis_server import RedisServer

PROJECT = Path(__file__).parent / "project"
#: The APP a Django project's worker runs.
DJANGO_APP = "cogworker.contrib.django.worker"


@pytest.fixture(scope="session")
def shop_environment(redis_server: RedisServer) -> dict[str, str]:
    """What the project's processes need in their environment: its settings and Redis."""
    return {"DJANGO_SETTINGS_MODULE": "shopsite.settings", "SHOP_REDIS_URL": redis_server.url}


@pytest.fixture(scope="session")
def django_project(
    tmp_path_factory: pytest.TempPathFactory, shop_environment: dict[str, str]
) -> Path:
    """The project's directory, Django set up on it in this process, its tables made."""
    directory = tmp_path_factory.mktemp("django") / "project"
    shutil.copytree(PROJECT, directory)
    sys.path.insert(0, str(directory))
    # Only while the settings load: other tests' children must not inherit them.
    os.environ.update(shop_environment)
    try:
        django.setup()
    finally:
        for name in shop_environment:
            del os.environ[name]
    for database in settings.DATABASES:
        call_command("migrate", database=database, run_syncdb=True, verbosity=0)
    _forget_default_client()  # ready() configured it; tests that enqueue use `configured`
    return directory


@pytest.fixture
def configured(django_project: Path, redis_url: str) -> Iterator[cogworker.Client]:
    """The default client as the app's `ready()` configures it from the settings."""
    apps.get_app_config("cogworker").ready()
    yield default_clients.default_client()
    _forget_default_client()


@pytest.fixture
def shop_worker(
    cogworker_factory: CogworkerFactory,
    django_project: Path,
    shop_environment: dict[str, str],
    redis_url: str,
) -> CogworkerProcess:
    """A `cogworker work cogworker.contrib.django.worker` of the project, one job at a time."""
    return cogworker_factory(
        DJANGO_APP, redis_url=redis_url, concurrency=1, env=shop_environment, cwd=django_project
    )


def _forget_default_client() -> None:
    default_clients.default_client().close()
    default_clients._default = None
