"""Durable writes: a write followed by `WAIT numreplicas timeout`, and what its reply says.

Redis replicates asynchronously: a write the primary acknowledged can be
gone after a failover if no replica had it yet.  With `replicas` above 0, a
pipeline that moves jobs (an enqueue, an outcome) ends with `WAIT`, which
answers how many replicas have every write this connection made so far (on a
cluster, each primary's writes end with their own: see `durable_writes`).
Fewer than asked is a `Shortfall`: the writes are on the primary all the
same, and a failover before the replicas catch up may lose them.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import attrs
import redis

#: Seconds a write waits for its replicas by default.
DEFAULT_TIMEOUT = 1.0
#: The longest wait allowed: a WAIT must answer well before the socket times out
#: (connection.SOCKET_TIMEOUT, 5 s), or the connection is dropped as dead.
MAX_TIMEOUT = 3.0


def checked_replicas(value: object, setting: str) -> int:
    """`value` as a count of replicas; ValueError naming `setting` if it can't be one."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{setting} is a whole number of replicas, 0 or more, not {value!r}")
    return value


def checked_timeout(value: object, setting: str) -> float:
    """`value` as seconds to wait; ValueError naming `setting` if out of (0, MAX_TIMEOUT]."""
    try:
        seconds = float(value)  # type: ignore[arg-type]  # anything else is the error below
    except (TypeError, ValueError):
        seconds = float("nan")
    if isinstance(value, bool) or not 0 < seconds <= MAX_TIMEOUT:
        raise ValueError(
            f"{setting} is seconds above 0 and at most {MAX_TIMEOUT:g} (below the socket "
            f"timeout), not {value!r}"
        )
    return seconds


@attrs.frozen(kw_only=True)
class Replication:
    """How many replicas a job move must reach before it counts (0: don't wait), and for
    how many seconds to wait for them."""

    replicas: int = 0
    timeout: float = DEFAULT_TIMEOUT

    def wait_args(self) -> tuple[str, int, int]:
        """The WAIT command for these replicas and this timeout."""
        # WAIT's timeout 0 would block forever: at least 1 ms.
        return ("WAIT", self.replicas, max(1, round(self.timeout * 1000)))

    def split(self, replies: list[Any]) -> tuple[list[Any], Shortfall | None]:
        """A pipeline's replies without the WAIT's, and the shortfall if it reached too few."""
        if not self.replicas:
            return replies, None
        if isinstance(replies[-1], redis.RedisError):
            raise replies[-1]  # refused (an ACL without +wait): said as any refusal is
        return replies[:-1], self.shortfall(int(replies[-1]))

    def shortfall(self, reached: int) -> Shortfall | None:
        """The shortfall of writes that reached `reached` replicas (None: enough)."""
        return None if reached >= self.replicas else Shortfall(reached=reached, of=self)


@attrs.frozen(kw_only=True)
class Shortfall:
    """A WAIT that answered fewer replicas than asked for."""

    reached: int
    of: Replication

    def __str__(self) -> str:
        return (
            f"the write reached {self.reached} of the {self.of.replicas} replicas "
            f"Config.min_replicas asks for within {self.of.timeout:g} s (Config.replica_timeout)"
        )


def unless_short(outcome: tuple[list[Any], Shortfall | None]) -> list[Any]:
    """The replies of writes and their shortfall: the replies, unless there is one (then
    NotReplicatedError)."""
    replies, short = outcome
    if short is not None:
        raise NotReplicatedError(short)
    return replies


class NotReplicatedError(Exception):
    """Writes done on the primary that too few replicas confirmed (see `Shortfall`)."""

    def __init__(self, shortfall: Shortfall) -> None:
        super().__init__(str(shortfall))
        self.shortfall = shortfall


@attrs.define
class ShortfallLog:
    """Says when outcome writes start and stop reaching too few replicas, once each.

    A worker carries on meanwhile: a finished job whose acknowledgement a
    failover loses runs again (at least once), and stopping every worker
    while a replica is away would turn its loss into an outage.
    """

    logger: logging.Logger
    _short: bool = False
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def record(self, shortfall: Shortfall | None) -> None:
        """Note how one write went (None: it reached its replicas)."""
        with self._lock:
            was_short, self._short = self._short, shortfall is not None
        if shortfall is not None and not was_short:
            self.logger.warning(
                "%s; carrying on: a failover now may run jobs finished meanwhile again",
                shortfall,
                extra={"reason": "replicas-short"},
            )
        elif shortfall is None and was_short:
            self.logger.warning(
                "writes reach the replicas Config.min_replicas asks for again",
                extra={"reason": "replicas-back"},
            )
