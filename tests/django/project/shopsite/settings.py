"""Settings of the tests' Django project: two SQLite databases beside the code, cogworker
configured from `COGWORKER` (the Redis named by `$SHOP_REDIS_URL`)."""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "tests-only"
INSTALLED_APPS = ["cogworker.contrib.django", "shop"]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "default.sqlite3"},
    "other": {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "other.sqlite3"},
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True

COGWORKER = {
    "redis_url": os.environ["SHOP_REDIS_URL"],
    "track_status": True,
    "heartbeat_interval": 0.5,
    "poll_interval": 0.5,
}
