"""The project's settings with a misspelt `COGWORKER` key, which must stop Django's start."""

from shopsite.settings import *  # noqa: F403  # the project's settings, but for one key

COGWORKER = {"redis_ur": "redis://127.0.0.1:6379/0"}
