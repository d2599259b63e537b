"""`cogworker migrate`'s layout step 6 on the old layout's data set: every waiting record
names its locks in its queue's slot, each lock its job held is there with its TTL, and a
unique job stays unique across the migration."""

from __future__ import annotations

import json

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.cli_runner import Cli
from tests.periodic.conftest import StartWorker
from tests.periodic.old_layout import (
    HELD_LOCKS,
    LEFTOVER_LOCK,
    OLD_BATCH,
    OLD_IN_PROGRESS,
    OLD_LISTS,
    OLD_RUNNING,
    OLD_SCHEDULE,
    OLD_SETS,
    OLD_UNIQUE,
    UNIQUE_ARGS,
    UNIQUE_ENTRY,
    write_old_layout,
)
from tests.support.processes import wait_until
from tests.tracking.jobs import TrackedUnique

#: Every value of these types is a record that may name a lock.
RECORD_TYPES = (b"list", b"zset", b"hash")


def _records(rc: redis.Redis) -> dict[str, list[bytes]]:
    """Every entry of every list, sorted set and hash, by key."""
    return {key.decode(): _values(rc, key) for key in rc.scan_iter(count=1000)
            if rc.type(key) in RECORD_TYPES}  # fmt: skip


def _naming_old_locks(rc: redis.Redis) -> set[str]:
    """The keys holding a record that names a lock the old way."""
    olds = (OLD_UNIQUE.encode(), OLD_RUNNING.encode())
    return {key for key, entries in _records(rc).items()
            if any(old in entry for old in olds for entry in entries)}  # fmt: skip


def test_the_data_set_names_locks_the_old_way_in_every_place_a_job_waits(
    rc: redis.Redis, redis_url: str
) -> None:
    """Before: each held lock under its old name, with a TTL, and records naming them in a
    queue, the scheduled, retry and dead sets, an in-progress list, the unsettled and
    parking lists, a batch and the periodic schedule."""
    write_old_layout(rc, redis_url)

    for jid, (old, _) in HELD_LOCKS.items():
        assert rc.get(old) == jid.encode()
        assert rc.pttl(old) > 0
    assert _naming_old_locks(rc) == {
        "cogworker:queue:default", *OLD_SETS.values(),
        OLD_IN_PROGRESS, *OLD_LISTS.values(), OLD_BATCH, OLD_SCHEDULE,
    }  # fmt: skip


def _values(rc: redis.Redis, key: bytes) -> list[bytes]:
    kind = rc.type(key)
    if kind == b"hash":
        return list(rc.hvals(key))
    return list(rc.lrange(key, 0, -1) if kind == b"list" else rc.zrange(key, 0, -1))


def test_after_migrate_records_name_their_locks_where_they_are(
    rc: redis.Redis, redis_url: str, cli: Cli
) -> None:
    """Each lock a waiting job held is under its new name, held by the same jid, expiring;
    no record names a lock the old way; a lock no record named stays, to expire."""
    write_old_layout(rc, redis_url)
    ttls = {jid: rc.pttl(old) for jid, (old, _) in HELD_LOCKS.items()}

    assert cli.run("migrate").status == 0

    for jid, (old, new) in HELD_LOCKS.items():
        assert rc.get(new) == jid.encode(), new
        assert 0 < rc.pttl(new) <= ttls[jid]
        assert not rc.exists(old)
    assert _naming_old_locks(rc) == set()
    assert rc.get(LEFTOVER_LOCK) == b"long-gone"
    entry = rc.hget(keys.PERIODIC_SCHEDULE, UNIQUE_ENTRY) or b""
    assert keys.unique_lock("default", "yearly").encode() in entry


def test_a_unique_job_stays_refused_after_migrate_and_is_free_once_it_has_run(
    rc: redis.Redis, redis_url: str, cli: Cli, start_worker: StartWorker
) -> None:
    """A unique job queued before the migration: a duplicate is refused after it (its lock
    moved with it; so is a scheduled one's, its entry in its queue's set now), until a
    worker has run it, which lets go of the lock's new name.  A job an old release pushed
    after the migration names its lock the old way: its run lets go of that one."""
    write_old_layout(rc, redis_url)
    assert cli.run("migrate").status == 0
    config = cogworker.Config(redis_url=redis_url)
    lock = HELD_LOCKS["tracked-queued"][1]
    straggler_lock = OLD_UNIQUE + "pushed-late"
    rc.set(straggler_lock, "j-late", px=3_600_000)
    rc.lpush(keys.queue("default"), json.dumps({
        "class": TrackedUnique.class_path(), "args": ["late"], "jid": "j-late",
        "queue": "default", "retry": True, "unique": "until_executed",
        "unique_lock": straggler_lock,
    }))  # fmt: skip
    client = cogworker.Client(config)
    try:
        assert client.enqueue(TrackedUnique, UNIQUE_ARGS["queued"]) is None
        # Scheduled before: its entry moved to its queue's set (step 8), its lock with it.
        assert client.enqueue_in(3600, TrackedUnique, UNIQUE_ARGS["scheduled"]) is None
        scheduled = rc.zrange(keys.schedule("default"), 0, -1)
        assert [m for m in scheduled if b'"tracked-scheduled"' in m]

        worker = start_worker("merging")
        wait_until(lambda: not rc.exists(lock, straggler_lock), 30, message=worker.log_tail)

        jid = client.enqueue(TrackedUnique, UNIQUE_ARGS["queued"])
        assert jid is not None
        # The new job holds the lock, or the worker has run it already and let go of it.
        assert rc.get(lock) in (jid.encode(), None)
        wait_until(lambda: not rc.exists(lock), 30, message=worker.log_tail)
    finally:
        client.close()


def test_a_migration_reports_each_rewrite_as_found_after_the_steps_before_it(
    rc: redis.Redis, redis_url: str, cli: Cli
) -> None:
    """Step 6's rows count the records it rewrites where they are by then: the queue's
    list it rewrites in was renamed by step 2 in the same run."""
    write_old_layout(rc, redis_url)

    document = cli.json("migrate")

    rewrites = {row["old"]: row for row in document["keys"] if row["step"] == 6}
    assert rewrites["cogworker:{q:*}:queue"]["entries"] > 0
    for row in rewrites.values():
        assert row["done"] == f"rewrote {row['entries']}", row
