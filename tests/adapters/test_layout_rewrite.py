"""Layout step 6's rewrites on a real Redis: each entry replaced where it is (a list's place,
a sorted set's score, a hash's field), its job's locks moved with it and no other lock,
nothing written for an entry gone, nothing left to do on a second run."""

from __future__ import annotations

import json

import redis

from cogworker.adapters import layout_rewrite
from cogworker.adapters import redis_keys as keys
from cogworker.domain import relock
from cogworker.domain.layout_rewrites import EntryKind, Rewrite

QUEUE = "mail"
OLD_LOCK = "cogworker:unique:app.Send:mail:abc"
OLD_RUNNING = "cogworker:periodic:running:nightly"
NEW_LOCK = keys.unique_lock(QUEUE, "app.Send:mail:abc")
NEW_RUNNING = keys.periodic_running(QUEUE, "nightly")


def _payload(jid: str, **locks: str) -> bytes:
    return json.dumps({"class": "app.Send", "args": [], "jid": jid, "queue": QUEUE, **locks},
                      separators=(",", ":")).encode()  # fmt: skip


def _rewrites(rc: redis.Redis, key: str, kind: EntryKind) -> list[str]:
    """Every entry of `key` to rewrite, each rewritten as it is read: their results."""
    return [layout_rewrite.rewrite_entry(rc, each)
            for each in layout_rewrite.entry_rewrites(rc, key, kind)]  # fmt: skip


def test_the_new_names_are_those_the_code_gives_a_jobs_locks() -> None:
    """The decision's names and `redis_keys`' agree, for both kinds of lock."""
    assert relock.new_lock_name(OLD_LOCK, QUEUE) == NEW_LOCK
    assert relock.new_lock_name(OLD_RUNNING, QUEUE) == NEW_RUNNING
    assert relock.new_lock_name(NEW_LOCK, QUEUE) is None


def test_a_list_entry_is_rewritten_in_its_place_with_the_locks_its_job_holds(
    rc: redis.Redis,
) -> None:
    """The payload keeps its place among the others; the lock holding its jid moves with its
    TTL; a lock it names that another job holds stays where it is."""
    locked = _payload("j1", unique_lock=OLD_LOCK, running_lock=OLD_RUNNING)
    rc.rpush(keys.queue(QUEUE), b"first", locked, b"last")
    rc.set(OLD_LOCK, "j1", px=600_000)
    rc.set(OLD_RUNNING, "someone-else")
    key = keys.queue(QUEUE)

    assert _rewrites(rc, key, "list") == ["rewritten"]

    first, rewritten, last = rc.lrange(key, 0, -1)
    assert (first, last) == (b"first", b"last")
    assert json.loads(rewritten)["unique_lock"] == NEW_LOCK
    assert json.loads(rewritten)["running_lock"] == NEW_RUNNING
    assert rc.get(NEW_LOCK) == b"j1"
    assert 0 < rc.pttl(NEW_LOCK) <= 600_000
    assert not rc.exists(OLD_LOCK, NEW_RUNNING)
    assert rc.get(OLD_RUNNING) == b"someone-else"
    assert _rewrites(rc, key, "list") == []


def test_an_entry_found_elsewhere_in_its_list_is_rewritten_there(rc: redis.Redis) -> None:
    """Read at one place, then taken from the right end: the script finds it where it is
    now; taken altogether, it writes nothing and moves no lock."""
    key = keys.queue(QUEUE)
    rc.rpush(key, _payload("j1", unique_lock=OLD_LOCK), b"next to run")
    rc.set(OLD_LOCK, "j1")
    (moved,) = layout_rewrite.entry_rewrites(rc, key, "list")
    rc.rpop(key)

    assert layout_rewrite.rewrite_entry(rc, moved) == "rewritten"
    assert json.loads(rc.lindex(key, -1) or b"")["unique_lock"] == NEW_LOCK

    rc.delete(key)
    rc.rpush(key, _payload("j2", unique_lock=OLD_LOCK))
    rc.set(OLD_LOCK, "j2")
    (gone,) = layout_rewrite.entry_rewrites(rc, key, "list")
    rc.delete(key)
    assert layout_rewrite.rewrite_entry(rc, gone) == "absent"
    assert rc.get(OLD_LOCK) == b"j2"


#: The retry set as the layout before step 8 kept it, for all queues (step 6 rewrites it).
OLD_RETRY = "cogworker:retry"


def test_a_sorted_set_member_keeps_its_score_and_a_hash_its_field(rc: redis.Redis) -> None:
    """A retrying job's payload: same score; a batch callback's payload: same field; a lock
    already held under its new name stays the holder's."""
    rc.zadd(OLD_RETRY, {_payload("j1", unique_lock=OLD_LOCK): 1_800_000_000.123456})
    rc.set(OLD_LOCK, "j1")
    rc.set(NEW_LOCK, "j1")
    rc.hset("cogworker:{b:b1}:batch", mapping={
        "cb:success": _payload("b1-success", unique_lock="cogworker:unique:jid:b1-success"),
        "total": "3",
    })  # fmt: skip

    assert _rewrites(rc, OLD_RETRY, "zset") == ["rewritten"]
    assert _rewrites(rc, "cogworker:{b:b1}:batch", "hash") == ["rewritten"]

    ((member, score),) = rc.zrange(OLD_RETRY, 0, -1, withscores=True)
    assert score == 1_800_000_000.123456
    assert json.loads(member)["unique_lock"] == NEW_LOCK
    assert not rc.exists(OLD_LOCK)
    callback = json.loads(rc.hget("cogworker:{b:b1}:batch", "cb:success") or b"")
    assert callback["unique_lock"] == keys.unique_lock(QUEUE, "jid:b1-success")
    assert rc.hget("cogworker:{b:b1}:batch", "total") == b"3"


def test_a_rewrite_covers_the_keys_of_its_type_named_like_its_pattern(rc: redis.Redis) -> None:
    """Every queue's list, pipelined a page at a time; a key of another type is left."""
    for n in range(3):
        rc.rpush(keys.queue(f"q{n}"), *(_payload(f"j{n}-{i}", unique_lock=OLD_LOCK)
                                        for i in range(layout_rewrite.PAGE + 1)))  # fmt: skip
    rc.set(keys.queue("not-a-list"), _payload("x", unique_lock=OLD_LOCK))
    queues = Rewrite(pattern="cogworker:{q:*}:queue", kind="list")

    assert layout_rewrite.rewrite_all(rc, queues) == 3 * (layout_rewrite.PAGE + 1)
    assert layout_rewrite.rewrite_all(rc, queues) == 0
    assert OLD_LOCK.encode() in (rc.get(keys.queue("not-a-list")) or b"")
