"""Every error cogworker raises or hands to your hooks.

::

    CogworkerError
    ├── ConfigError              a Config, APP or flag that can't work
    ├── RedisUnavailableError    Redis can't be reached (enqueue while it is down)
    │   └── EnqueueUnavailableError  ... during an enqueue (also an EnqueueError)
    ├── RedisRefusedError        Redis answered no: credentials, a permission, the database, memory
    │   └── EnqueueRefusedError      ... to an enqueue (also an EnqueueError)
    ├── EnqueueError             an enqueue that failed: the jids pushed, and those not known
    │   └── EnqueueNotReplicatedError  ... done on the primary, too few replicas confirmed it
    ├── WrongKeyTypeError        a cogworker key holds another Redis type
    ├── LayoutError              Redis holds keys of another layout: `cogworker migrate`
    ├── UnknownJobClassError     a job's class can't be imported (renamed, removed)
    ├── BatchClosedError         an enqueue into a batch that is closed (or unknown)
    ├── JobOrphanedError         its process kept dying while running it
    ├── JobHandedBackError       its worker kept stopping while running it
    ├── JobFailedError           a failure filed later, from its stored record
    ├── JobKilledError           killed by hand (the dashboard's Kill)
    ├── JobCancelledError        raised into a running job cancelled by `Client.cancel`
    ├── JobTimeoutError          raised into (or filed for) a job past its time limit
    ├── UnstorableResultError    a job's return value its kept result can't hold
    ├── JobResultError           `Client.result`: the job ended without a value (dead...)
    ├── ResultTimeoutError       `Client.result`: no result within the timeout
    └── ResultNotFoundError      `Client.result`: no such job keeps a result, or it expired
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "BatchClosedError",
    "CogworkerError",
    "ConfigError",
    "EnqueueError",
    "EnqueueNotReplicatedError",
    "EnqueueRefusedError",
    "EnqueueUnavailableError",
    "JobCancelledError",
    "JobFailedError",
    "JobHandedBackError",
    "JobKilledError",
    "JobOrphanedError",
    "JobResultError",
    "JobTimeoutError",
    "LayoutError",
    "RedisRefusedError",
    "RedisUnavailableError",
    "ResultNotFoundError",
    "ResultTimeoutError",
    "UnknownJobClassError",
    "UnstorableResultError",
    "WrongKeyTypeError",
]


class CogworkerError(Exception):
    """The base of every cogworker error."""


class ConfigError(CogworkerError):
    """A configuration that can't work, named with what is wrong."""


class RedisUnavailableError(CogworkerError):
    """Redis could not be reached or did not answer in time."""


class RedisRefusedError(CogworkerError):
    """Redis answered, and refused: the credentials, a permission (ACL), the database
    index, or a write when it is out of memory.  The message says which."""


class EnqueueError(CogworkerError):
    """An enqueue that failed part-way.

    `pushed`: the jids known to be enqueued.  `unknown`: the jids that may or
    may not have been enqueued (the reply was lost).  Every other jid of the
    call was not enqueued.  Enqueue the unknown ones again with the same jids
    (`jid=` / `jids=`): a jid still queued, scheduled, running or waiting to
    retry is not pushed twice.
    """

    def __init__(self, problem: str, *, pushed: Sequence[str] = (), unknown: Sequence[str] = ()):
        self.problem = problem
        self.pushed = tuple(pushed)
        self.unknown = tuple(unknown)
        super().__init__(_enqueue_message(problem, self.pushed, self.unknown))

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only fields: the default reduce would call __init__(message) alone.
        return _rebuild_enqueue_error, (type(self), self.problem, self.pushed, self.unknown)

    def with_pushed(self, pushed: Sequence[str]) -> EnqueueError:
        """This error, also naming `pushed` (by earlier round trips of the same call)."""
        return type(self)(self.problem, pushed=pushed, unknown=self.unknown)


def _enqueue_message(problem: str, pushed: tuple[str, ...], unknown: tuple[str, ...]) -> str:
    done = f"; {len(pushed)} enqueued (see .pushed)" if pushed else ""
    if not unknown:  # the problem says what happened to the others
        return f"{problem}{done}"
    if len(unknown) == 1:
        return f"{problem}{done}; job {unknown[0]} may or may not have been enqueued"
    return f"{problem}{done}; {len(unknown)} jobs may or may not have been enqueued (see .unknown)"


def _rebuild_enqueue_error(
    kind: type[EnqueueError], problem: str, pushed: tuple[str, ...], unknown: tuple[str, ...]
) -> EnqueueError:
    return kind(problem, pushed=pushed, unknown=unknown)


class EnqueueUnavailableError(EnqueueError, RedisUnavailableError):
    """Redis went away during an enqueue (see `EnqueueError` for what was pushed)."""


class EnqueueRefusedError(EnqueueError, RedisRefusedError):
    """Redis refused an enqueue (see `EnqueueError` for what was pushed)."""


class EnqueueNotReplicatedError(EnqueueError):
    """An enqueue the primary did, that fewer replicas than `Config.min_replicas` confirmed
    within `Config.replica_timeout`.

    The jobs (in `unknown`) are on the primary and run unless a failover
    loses them before the replicas catch up.  Enqueue them again with the
    same jids to wait again: a jid still waiting is not pushed twice.
    """

    def __init__(
        self,
        problem: str,
        *,
        pushed: Sequence[str] = (),
        unknown: Sequence[str] = (),
        reached: int = 0,
        required: int = 0,
    ):
        self.reached = reached
        self.required = required
        super().__init__(problem, pushed=pushed, unknown=unknown)

    def __reduce__(self) -> tuple[object, ...]:
        fields = (self.problem, self.pushed, self.unknown, self.reached, self.required)
        return _rebuild_not_replicated, fields

    def with_pushed(self, pushed: Sequence[str]) -> EnqueueError:
        """This error, also naming `pushed` (by earlier round trips of the same call)."""
        return EnqueueNotReplicatedError(
            self.problem,
            pushed=pushed,
            unknown=self.unknown,
            reached=self.reached,
            required=self.required,
        )


def _rebuild_not_replicated(
    problem: str, pushed: tuple[str, ...], unknown: tuple[str, ...], reached: int, required: int
) -> EnqueueNotReplicatedError:
    return EnqueueNotReplicatedError(
        problem, pushed=pushed, unknown=unknown, reached=reached, required=required
    )


class WrongKeyTypeError(CogworkerError):
    """A key cogworker uses holds a value of another Redis type."""


class LayoutError(CogworkerError):
    """Redis holds cogworker's keys in another layout than this release's: an older one
    (stop the workers, run `cogworker migrate`) or a newer one (upgrade)."""


class ClientClosedError(CogworkerError):
    """A call on an `AsyncClient` after its `aclose` began: nothing was sent."""


class UnknownJobClassError(CogworkerError):
    """A job names a class this worker can't import."""


class BatchClosedError(CogworkerError):
    """An enqueue into a batch that is closed (its members are counted) or unknown."""


class JobOrphanedError(CogworkerError):
    """Handed to death hooks for a job buried because its process kept dying while running it."""


class JobHandedBackError(CogworkerError):
    """Handed to death hooks for a job buried because it was still running at more
    worker stops than `Config.max_handbacks` (each time put back unfinished)."""


class JobFailedError(CogworkerError):
    """Handed to death hooks for a failure filed in dead later, from its stored record.

    The message is the original one; the original class name is in
    `job["error_class"]`.
    """


class JobKilledError(CogworkerError):
    """Handed to death handlers for a job killed by hand (the dashboard's Kill)."""


class JobCancelledError(CogworkerError):
    """Raised into a running job that `Client.cancel` cancelled (an async job's task is
    cancelled instead); the run ends as `cancelled`, never retried."""


class JobTimeoutError(CogworkerError):
    """A job ran past its time limit (`timeout=`, `Config.default_timeout`): raised into it
    at the limit (an async job's task is cancelled instead), or filed for it when it is
    still stuck `Config.timeout_grace` seconds later.  An ordinary failure: `retry_in`
    sees it, the retry budget and the death hooks apply."""


class UnstorableResultError(CogworkerError):
    """A job keeping its result (`keep_result`) returned a value a result can't hold: not
    JSON-native, or larger than `Config.max_result_bytes`.  Raised as the run's error: an
    ordinary failure (`retry_in` sees it, the retry budget applies)."""


class JobResultError(CogworkerError):
    """`Client.result`: the job ended for good without a value.

    `outcome` says how ("dead", "killed", "discarded", "cancelled", "expired");
    `error_class` and `error_message` are its last error's ("" when there was
    none, as for a job cancelled or expired before it ran).
    """

    def __init__(self, jid: str, outcome: str, error_class: str = "", error_message: str = ""):
        self.jid = jid
        self.outcome = outcome
        self.error_class = error_class
        self.error_message = error_message
        error = f": {error_class}: {error_message}" if error_class else f": {error_message}"
        super().__init__(f"job {jid} ended {outcome}{error if error_message else ''}")

    def __reduce__(self) -> tuple[object, ...]:
        return type(self), (self.jid, self.outcome, self.error_class, self.error_message)


class ResultTimeoutError(CogworkerError, TimeoutError):
    """`Client.result`: the job didn't end within the timeout (it may still: ask again)."""


class ResultNotFoundError(CogworkerError, LookupError):
    """`Client.result`: no job of that jid keeps a result (unknown, or its class doesn't
    keep one: `keep_result`), or its result has expired, or the job ended and its result
    was evicted (a Redis at its `maxmemory`)."""
