"""cogworker: reliable background jobs for Python on Redis.

::

    import cogworker
    from cogworker import Config, Job

    class SendEvent(Job, queue="events", retry=10):
        def perform(self, event_id: int) -> None: ...

    cogworker.configure(Config(redis_url="redis://127.0.0.1:6379/0"))
    SendEvent.perform_async(42)

and run `cogworker work yourapp` to work the jobs off.
"""

from cogworker.app import testing
from cogworker.app.async_client import AsyncClient
from cogworker.app.client import Client, configure, status
from cogworker.app.config import Config
from cogworker.app.job import Job, JobOptions
from cogworker.app.middleware import CallNext, RunContext
from cogworker.app.periodic import Periodic
from cogworker.domain.failure import DISCARD, KILL
from cogworker.domain.job import JobRecord
from cogworker.exceptions import (
    CogworkerError,
    ConfigError,
    EnqueueError,
    EnqueueRefusedError,
    EnqueueUnavailableError,
    JobFailedError,
    JobHandedBackError,
    JobKilledError,
    JobOrphanedError,
    RedisRefusedError,
    RedisUnavailableError,
    UnknownJobClassError,
    WrongKeyTypeError,
)

__version__ = "0.8.0"

__all__ = [
    "DISCARD",
    "KILL",
    "AsyncClient",
    "CallNext",
    "Client",
    "CogworkerError",
    "Config",
    "ConfigError",
    "EnqueueError",
    "EnqueueRefusedError",
    "EnqueueUnavailableError",
    "Job",
    "JobFailedError",
    "JobHandedBackError",
    "JobKilledError",
    "JobOptions",
    "JobOrphanedError",
    "JobRecord",
    "Periodic",
    "RedisRefusedError",
    "RedisUnavailableError",
    "RunContext",
    "UnknownJobClassError",
    "WrongKeyTypeError",
    "__version__",
    "configure",
    "status",
    "testing",
]
