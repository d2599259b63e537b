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

from typing import TYPE_CHECKING

from cogworker.app.config import Config
from cogworker.app.job import Job
from cogworker.app.job_base import JobOptions
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

if TYPE_CHECKING:
    from cogworker import testing
    from cogworker.app.async_client import AsyncClient
    from cogworker.app.cancelling import CancelResult
    from cogworker.app.client import Client
    from cogworker.app.default_clients import configure, status

#: From the installed distribution's metadata (pyproject.toml's `version`).
__version__ = VERSION

#: Exported names whose modules load at first use (`cogworker.AsyncClient`, `from
#: cogworker import Client`): the clients and the testing modes, with their redis-py
#: clients, pushing and batch code, are a worker process's heaviest imports that it never
#: runs (a worker's memory, issue #19).
_LOADED_AT_FIRST_USE = {
    "AsyncClient": "cogworker.app.async_client",
    "CancelResult": "cogworker.app.cancelling",
    "Client": "cogworker.app.client",
    "configure": "cogworker.app.default_clients",
    "status": "cogworker.app.default_clients",
    "testing": "cogworker.testing",
}


def __getattr__(name: str) -> object:
    """An export of `_LOADED_AT_FIRST_USE`, its module imported now."""
    module_name = _LOADED_AT_FIRST_USE.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module = importlib.import_module(module_name)
    value = module if name == "testing" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the ones loaded at first use too."""
    return sorted({*globals(), *_LOADED_AT_FIRST_USE})


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
