"""cogworker: reliable background jobs for Python on Redis.

::

    import cogworker
    from cogworker import Config, Job

    class SendEvent(Job, queue="events", retry=10):
        def perform(self, event_id: int) -> None: ...

    cogworker.configure(Config(redis_url="redis://127.0.0.1:6379/0"))
    SendEvent.perform_async(42)

and run `cogworker work yourapp` to work the jobs off.

Everything a user imports is here, in `cogworker.exceptions` and in a few
documented modules: `cogworker.testing` (inline and fake modes),
`cogworker.tracking` (reading statuses, attempts, history, counters),
`cogworker.processes` (listing workers, asking them to quiet or stop),
`cogworker.dashboard` (the dashboard as an ASGI app) and
`cogworker.contrib.django`.  The rest (`cogworker.domain`,
`cogworker.adapters`, `cogworker.app`) is private and changes without notice.
"""

from cogworker import testing
from cogworker.app.async_client import AsyncClient
from cogworker.app.cancelling import CancelResult
from cogworker.app.client import Client
from cogworker.app.config import Config
from cogworker.app.default_clients import configure, status
from cogworker.app.job import Job, JobOptions
from cogworker.app.middleware import AsyncCallNext, CallNext, RunContext
from cogworker.app.periodic import Periodic
from cogworker.app.version import VERSION
from cogworker.domain.batches import BatchStatus
from cogworker.domain.failure import DISCARD, KILL
from cogworker.domain.job import JobRecord
from cogworker.domain.key_limits import Concurrency, Rate
from cogworker.exceptions import (
    BatchClosedError,
    ClientClosedError,
    CogworkerError,
    ConfigError,
    EnqueueError,
    EnqueueNotReplicatedError,
    EnqueueRefusedError,
    EnqueueUnavailableError,
    JobCancelledError,
    JobFailedError,
    JobHandedBackError,
    JobKilledError,
    JobOrphanedError,
    JobResultError,
    JobTimeoutError,
    LayoutError,
    RedisRefusedError,
    RedisUnavailableError,
    ResultNotFoundError,
    ResultTimeoutError,
    UnknownJobClassError,
    UnstorableResultError,
    WrongKeyTypeError,
)

#: From the installed distribution's metadata (pyproject.toml's `version`).
__version__ = VERSION

__all__ = [
    "DISCARD",
    "KILL",
    "AsyncCallNext",
    "AsyncClient",
    "BatchClosedError",
    "BatchStatus",
    "CallNext",
    "CancelResult",
    "Client",
    "ClientClosedError",
    "CogworkerError",
    "Concurrency",
    "Config",
    "ConfigError",
    "EnqueueError",
    "EnqueueNotReplicatedError",
    "EnqueueRefusedError",
    "EnqueueUnavailableError",
    "Job",
    "JobCancelledError",
    "JobFailedError",
    "JobHandedBackError",
    "JobKilledError",
    "JobOptions",
    "JobOrphanedError",
    "JobRecord",
    "JobResultError",
    "JobTimeoutError",
    "LayoutError",
    "Periodic",
    "Rate",
    "RedisRefusedError",
    "RedisUnavailableError",
    "ResultNotFoundError",
    "ResultTimeoutError",
    "RunContext",
    "UnknownJobClassError",
    "UnstorableResultError",
    "WrongKeyTypeError",
    "__version__",
    "configure",
    "status",
    "testing",
]
