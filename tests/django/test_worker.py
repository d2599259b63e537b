"""`cogworker work cogworker.contrib.django.worker`: a real worker of the Django project."""

from __future__ import annotations

from pathlib import Path

import cogworker
from tests.django.conftest import DJANGO_APP
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until

#: A worker of the project starts Django first: generous.
RUN_TIMEOUT = 30.0


def test_each_job_gets_a_fresh_connection_as_each_request_does(
    configured: cogworker.Client, shop_worker: CogworkerProcess
) -> None:
    """With CONN_MAX_AGE 0, Django closes a request's connection when it ends; the worker
    closes a job's, so the same thread's next job opens another (its TEMP table gone)."""
    from shop.jobs import CountRunsOnConnection
    from shop.models import ConnectionSighting

    CountRunsOnConnection.perform_async("first")
    CountRunsOnConnection.perform_async("second")  # the worker's only thread runs both
    sightings = wait_until(
        lambda: (
            dict(ConnectionSighting.objects.values_list("label", "runs_on_connection"))
            if ConnectionSighting.objects.count() == 2
            else None
        ),
        RUN_TIMEOUT,
        message=shop_worker.log_tail,
    )
    assert sightings == {"first": 1, "second": 1}


def test_a_mistake_in_the_settings_stops_the_worker_naming_it(
    cogworker_factory: CogworkerFactory,
    django_project: Path,
    shop_environment: dict[str, str],
    redis_url: str,
) -> None:
    """A misspelt COGWORKER key is one `Error:` line naming it, exit status 2, as any
    setting `cogworker work` can't use."""
    worker = cogworker_factory(
        DJANGO_APP,
        redis_url=redis_url,
        env={**shop_environment, "DJANGO_SETTINGS_MODULE": "shopsite.bad_settings"},
        cwd=django_project,
    )
    assert worker.wait_for_exit(RUN_TIMEOUT) == 2
    errors = [line for line in worker.log_text().splitlines() if line.startswith("Error:")]
    assert len(errors) == 1
    assert "settings.COGWORKER: unknown keys ['redis_ur']" in errors[0]


def test_without_django_settings_the_worker_says_what_to_set(
    cogworker_factory: CogworkerFactory, django_project: Path, redis_url: str
) -> None:
    """No DJANGO_SETTINGS_MODULE: exit status 2 and the variable to set, not a traceback."""
    worker = cogworker_factory(DJANGO_APP, redis_url=redis_url, cwd=django_project)
    assert worker.wait_for_exit(RUN_TIMEOUT) == 2
    assert "set DJANGO_SETTINGS_MODULE" in worker.log_text()
    assert "Traceback" not in worker.log_text()
