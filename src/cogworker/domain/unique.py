"""Unique jobs: which lock a job takes, when it lets go, and for how long it holds it.

A lock's name is decided here; where it lives in Redis (its key) is
`adapters.redis_keys.unique_lock`'s.

Modes (the class option `unique=`):

* ``until_executed``: locked at enqueue, released when the job ends for good
  (success, dead, KILL, DISCARD); while it waits in the retry set the lock is
  extended so it never runs out before the retry, however long the delay;
* ``until_executing``: locked at enqueue, released when a worker starts it;
* ``while_executing``: locked only while it runs; a duplicate that starts
  meanwhile is put back a little later instead of running alongside.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Literal, get_args

from cogworker.domain.retries import LONGEST_DELAY

UniqueMode = Literal["until_executed", "until_executing", "while_executing"]
MODES: tuple[str, ...] = get_args(UniqueMode)
#: How long a `while_executing` duplicate waits before it is looked at again.
BUSY_RETRY_SECONDS = 2.0


def lock_name(class_path: str, queue: str, args: object, custom: str | None = None) -> str:
    """The lock of a job: its class and queue, and its arguments (or a class-supplied key)."""
    identity = custom if custom is not None else json.dumps(args, sort_keys=True)
    digest = hashlib.sha1(identity.encode(), usedforsecurity=False).hexdigest()
    return f"{class_path}:{queue}:{digest}"


def locks_at_enqueue(mode: str | None) -> bool:
    """Whether the lock is taken when the job is enqueued (else, if at all, when it runs)."""
    return mode in ("until_executed", "until_executing")


def released_at_start(mode: str | None) -> bool:
    """Whether a worker lets the lock go as soon as it starts the job."""
    return mode == "until_executing"


def held_while_running(mode: str | None) -> bool:
    """Whether the lock is taken when the job starts and let go when the run ends."""
    return mode == "while_executing"


def held_until_done(mode: str | None) -> bool:
    """Whether the lock lasts until the job ends for good (extended through retries)."""
    return mode == "until_executed"


def ttl_of(extra: Mapping[str, object], default: float) -> float:
    """A job's lock TTL as its payload carries it (`unique_ttl`), else `default`."""
    ttl = extra.get("unique_ttl")
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl < math.inf:
        return default
    return float(ttl)


def enqueue_ttl(ttl: float, run_at: float | None, now: float) -> float:
    """How long a lock taken at enqueue lasts: its TTL, plus the wait of a scheduled job."""
    return min(ttl + max(0.0, (run_at or now) - now), LONGEST_DELAY)


def retry_ttl(ttl: float, retry_at: float, now: float) -> float:
    """How long an `until_executed` lock must last once its job waits in the retry set."""
    return min(ttl + max(0.0, retry_at - now), LONGEST_DELAY)


def jid_lock_name(jid: str) -> str:
    """The lock of a job enqueued with a caller's jid: held, as ``until_executed``, from
    its push until it ends for good, so pushing that jid again meanwhile does nothing."""
    return f"jid:{jid}"
