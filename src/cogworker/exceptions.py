"""Every error cogworker raises or hands to your hooks.

::

    CogworkerError
    ├── ConfigError              a Config, APP or flag that can't work
    ├── RedisUnavailableError    Redis can't be reached (enqueue while it is down)
    ├── WrongKeyTypeError        a cogworker key holds another Redis type
    ├── UnknownJobClassError     a job's class can't be imported (renamed, removed)
    ├── JobOrphanedError         its process kept dying while running it
    ├── JobHandedBackError       its worker kept stopping while running it
    ├── JobFailedError           a failure filed later, from its stored record
    └── JobKilledError           killed by hand (the dashboard's Kill)
"""

from __future__ import annotations


class CogworkerError(Exception):
    """The base of every cogworker error."""


class ConfigError(CogworkerError):
    """A configuration that can't work, named with what is wrong."""


class RedisUnavailableError(CogworkerError):
    """Redis could not be reached or did not answer in time."""


class WrongKeyTypeError(CogworkerError):
    """A key cogworker uses holds a value of another Redis type."""


class UnknownJobClassError(CogworkerError):
    """A job names a class this worker can't import."""


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
