"""`settings.COGWORKER` becomes the `Config`, and a mistake in it is an
`ImproperlyConfigured` naming the key."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

import cogworker
from cogworker.contrib.django import config_from_settings
from tests.support.redis_server import RedisServer


def test_the_app_configures_the_default_client_from_the_settings(
    configured: cogworker.Client, redis_server: RedisServer
) -> None:
    """The app's `ready()` hands the settings' Config to `cogworker.configure`."""
    assert configured.config == config_from_settings()
    assert configured.config.redis_url == redis_server.url
    assert configured.config.track_status


@pytest.mark.usefixtures("django_project")
def test_plain_fields_are_taken_as_given() -> None:
    """Lists are fine where the Config holds tuples, as in a `--config` file."""
    given = {"queues": ["critical,2", "default,1"], "concurrency": 4, "job_modules": ["shop"]}
    with override_settings(COGWORKER=given):
        config = config_from_settings()
    assert config.queues == ("critical,2", "default,1")
    assert config.concurrency == 4
    assert config.job_modules == ("shop",)


@pytest.mark.usefixtures("django_project")
def test_object_fields_take_dotted_paths() -> None:
    """A settings module can't import app code, so middleware, death handlers and periodic
    jobs may be named by dotted path; objects given as they are are kept."""
    from shop.jobs import record_death

    def mark(job: cogworker.JobRecord, push: object) -> None:
        """A client middleware given as an object."""

    given = {"death_handlers": ["shop.jobs.record_death"], "client_middleware": [mark]}
    with override_settings(COGWORKER=given):
        config = config_from_settings()
    assert config.death_handlers == (record_death,)
    assert config.client_middleware == (mark,)


@pytest.mark.usefixtures("django_project")
def test_without_the_setting_the_config_is_the_default() -> None:
    """No `COGWORKER` in the settings: a default Config (Redis from the environment)."""
    with override_settings():
        from django.conf import settings

        del settings.COGWORKER
        assert config_from_settings() == cogworker.Config()


@pytest.mark.usefixtures("django_project")
@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"redis_ur": "redis://127.0.0.1:6379/0"}, r"unknown keys \['redis_ur'\]"),
        ({"concurrency": 0}, r"Config.concurrency must be a whole number, 1 or more .*got 0"),
        ({"concurrency": "4"}, r"Config.concurrency must be a whole number.*got '4'"),
        ({"redis_url": "http://example.com"}, "Config.redis_url 'http://example.com'"),
        ({"death_handlers": ["shop.jobs.nobody"]}, r"\['death_handlers'\]: can't import"),
        ({"server_middleware": "shop.jobs.record_death"}, r"\['server_middleware'\] must be"),
        (["redis_url"], "must be a dict of cogworker.Config fields, got list"),
    ],
    ids=["unknown", "invalid", "wrong-type", "bad-url", "no-such-path", "not-a-list", "not-a-dict"],
)
def test_a_mistake_is_improperly_configured_naming_it(given: object, named: str) -> None:
    """Each mistake names the setting and what is wrong with it."""
    with override_settings(COGWORKER=given), pytest.raises(ImproperlyConfigured, match=named):
        config_from_settings()
