"""The record of a new run: its checked arguments, its jid, what its options add."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.app.job_base import JobBase
from cogworker.domain import key_limits, limits, results, unique
from cogworker.domain.job import JobRecord
from cogworker.domain.json_values import JSON, first_non_json, is_json_native
from cogworker.exceptions import ConfigError

#: What a caller's jid may be made of: it becomes part of key names and URLs.
JID_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def new_jid() -> str:
    """A fresh job id: 24 hex digits from the OS's random source."""
    return secrets.token_hex(12)


def check_jid(jid: object) -> str:
    """A caller's jid as given, or ValueError saying why it can't be one."""
    if not isinstance(jid, str) or not JID_PATTERN.fullmatch(jid):
        raise ValueError(
            f"jid {jid!r}: a jid is 1 to 128 letters, digits and _ . : - (a UUID will do)"
        )
    return jid


def check_args(args: Sequence[object]) -> None:
    """Raise TypeError naming the first argument JSON can't carry as is."""
    if is_json_native(list(args)):
        return
    found = first_non_json(list(args), "args")
    if found is not None:
        where, kind = found
        raise TypeError(
            f"job arguments must be JSON-native (str, int, float, bool, None, list, "
            f"dict with str keys); {where} is {kind}"
        )


@attrs.frozen(kw_only=True)
class Expiry:
    """An enqueue's `expires_in`/`expires_at`, as given (checked by `at`)."""

    expires_in: object = None
    expires_at: object = None
    #: When `expires_in` counts from (a scheduled run's due time); None: the enqueue.
    due: float | None = None

    def at(self, now: float, class_expires_in: float | None) -> float | None:
        """When the run expires: as given, else the class's `expires_in`; ValueError naming
        a value that can't be one."""
        given = self.expires_in is not None or self.expires_at is not None
        expires_in = self.expires_in if given else class_expires_in
        start = now if self.due is None else max(now, self.due)
        return limits.expiry_of(start, expires_in, self.expires_at)


def _extra(
    job_class: type[JobBase],
    args: Sequence[JSON],
    lock_ttl: float,
    *,
    own_jid: str | None = None,
    keep_result: float | None = None,
) -> dict[str, JSON]:
    """The payload keys a job's options add: status tracking, its kept result (its class's
    `keep_result`, else the client's default), its unique lock.

    A caller's jid (`own_jid`) makes the push idempotent with an
    `until_executed` lock: the class's own one, else one keyed by the jid, in
    the job's queue's slot (the same jid pushed to another queue is another job).
    """
    options = job_class.cogworker_options
    extra: dict[str, JSON] = {"track_status": True} if options.track_status else {}
    keep = options.keep_result or keep_result
    if keep is not None:
        extra[results.PAYLOAD_KEY] = keep
    ttl = options.unique_for or lock_ttl
    if options.unique is not None:
        if own_jid is not None and not unique.held_until_done(options.unique):
            raise ValueError(
                f"jid={own_jid!r}: {job_class.__qualname__} is unique={options.unique!r}, whose "
                "lock doesn't last until the job ends, so a pushed jid can't be recognised; "
                "use unique='until_executed' or enqueue it without a jid"
            )
        custom = getattr(job_class, "unique_key", None)
        key = keys.unique_lock(
            options.queue,
            unique.lock_name(
                job_class.class_path(),
                options.queue,
                list(args),
                custom(list(args)) if custom else None,
            ),
        )
        extra.update(unique=options.unique, unique_lock=key, unique_ttl=ttl)
    elif own_jid is not None:
        lock = keys.unique_lock(options.queue, unique.jid_lock_name(own_jid))
        extra.update(unique="until_executed", unique_lock=lock, unique_ttl=ttl)
    return extra | _limit_fields(job_class, args)


def _limit_fields(job_class: type[JobBase], args: Sequence[JSON]) -> dict[str, JSON]:
    """The payload field of a job's per-key limit: its key, computed from its arguments by
    its class's `key` (a TypeError naming anything but a text it returns)."""
    limit = job_class.cogworker_options.limit
    if limit is None:
        return {}
    path = job_class.class_path()
    key = "" if limit.key is None else key_limits.checked_key(limit.key(list(args)), path)
    return key_limits.payload_fields(key_limits.claim_for(limit, path, key))


def check_importable(job_class: type[JobBase]) -> None:
    """ConfigError unless a worker can import `job_class` by its dotted path (`class_path`):
    a class defined in a script's __main__ or inside a function it can't."""
    if job_class.__module__ == "__main__":
        raise ConfigError(
            f"{job_class.__qualname__} is defined in __main__, which a worker can't import: "
            "a worker imports a job's class by its dotted path (module.Class), and __main__ "
            "is the script you ran, not a module it can import; move the class into a module "
            "(myapp/jobs.py) and import it from there"
        )
    if "<locals>" in job_class.__qualname__:
        raise ConfigError(
            f"{job_class.class_path()} is defined inside a function, where a worker can't "
            f"import it by its dotted path: define {job_class.__name__} at module level"
        )


def build_job(
    job_class: type[JobBase],
    args: Sequence[JSON],
    now: float,
    *,
    lock_ttl: float = 3600.0,
    jid: str | None = None,
    expiry: Expiry | None = None,
    keep_result: float | None = None,
) -> JobRecord:
    """The record of a new run of `job_class` with `args` (with a caller's `jid`, if given;
    `expiry`: when it must have started by, else its class's `expires_in` from `now`;
    `keep_result`: the client's default for a class that sets none)."""
    if not (isinstance(job_class, type) and issubclass(job_class, JobBase)):
        raise TypeError(f"{job_class!r} is not a cogworker Job class")
    check_importable(job_class)
    check_args(args)
    own_jid = None if jid is None else check_jid(jid)
    options = job_class.cogworker_options
    expires_at = (expiry or Expiry()).at(now, options.expires_in)
    return JobRecord(
        class_name=job_class.class_path(),
        queue=options.queue,
        jid=own_jid or new_jid(),
        args=tuple(args),
        retry=options.retry,
        created_at=now,
        expires_at=expires_at,
        extra=_extra(job_class, args, lock_ttl, own_jid=own_jid, keep_result=keep_result),
    )


def build_jobs(
    job_class: type[JobBase],
    args_list: Sequence[Sequence[JSON]],
    jids: Sequence[str] | None,
    now: float,
    *,
    lock_ttl: float = 3600.0,
    expiry: Expiry | None = None,
    keep_result: float | None = None,
) -> list[JobRecord]:
    """The records of one run per argument list (with the caller's `jids`, if given), every
    one checked before any is pushed."""
    if jids is None:
        return [
            build_job(
                job_class, args, now, lock_ttl=lock_ttl, expiry=expiry, keep_result=keep_result
            )
            for args in args_list
        ]
    if len(jids) != len(args_list):
        raise ValueError(f"{len(jids)} jids for {len(args_list)} argument lists")
    if len(set(jids)) != len(jids):
        twice = sorted({jid for jid in jids if jids.count(jid) > 1})[:5]
        raise ValueError(f"jids given more than once: {twice}")
    return [
        build_job(
            job_class, args, now, lock_ttl=lock_ttl, jid=jid, expiry=expiry, keep_result=keep_result
        )
        for args, jid in zip(args_list, jids, strict=True)
    ]
