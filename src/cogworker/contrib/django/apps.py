"""The Django app `cogworker.contrib.django`: configures cogworker from the settings."""

from __future__ import annotations

from django.apps import AppConfig

from cogworker.app.default_clients import configure
from cogworker.contrib.django.settings_config import config_from_settings


class CogworkerAppConfig(AppConfig):
    """Hands `settings.COGWORKER` to `cogworker.configure` once the apps are loaded."""

    name = "cogworker.contrib.django"
    label = "cogworker"
    verbose_name = "cogworker"

    def ready(self) -> None:
        """Configure the client of the `perform_*` shortcuts and `enqueue_on_commit`.

        Here and not at import: dotted paths in the settings name app code,
        importable only now.
        """
        configure(config_from_settings())
