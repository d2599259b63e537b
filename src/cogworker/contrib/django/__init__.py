"""cogworker in a Django project: settings, enqueue on commit, and the worker's APP.

::

    # settings.py
    INSTALLED_APPS = [..., "cogworker.contrib.django"]
    COGWORKER = {"redis_url": "redis://127.0.0.1:6379/0", "queues": ["default"]}

    # a view
    with transaction.atomic():
        order = Order.objects.create(...)
        enqueue_on_commit(ShipOrder, order.pk)   # pushed when the row is committed

and `DJANGO_SETTINGS_MODULE=mysite.settings cogworker work cogworker.contrib.django.worker`.
"""

from cogworker.contrib.django.on_commit import enqueue_on_commit
from cogworker.contrib.django.settings_config import config_from_settings

__all__ = ["config_from_settings", "enqueue_on_commit"]
