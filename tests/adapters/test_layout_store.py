"""The layout's keys on a real Redis: a key moves whole, once, and merges rather than
overwrites; the number only goes up; a fresh Redis is given this code's number."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_store import KeyReport, LayoutStore, admit_async
from cogworker.domain.layout import Rename, RenameMatching, Step
from cogworker.domain.layout_verdicts import Fresh, Outdated, Ready

HASH = Rename(old="cogworker:old:hash", new="cogworker:{new}:hash")
TEXT = Rename(old="cogworker:old:text", new="cogworker:{new}:text")
STEPS = (Step(number=1, summary="two keys renamed", renames=(HASH, TEXT)),)


def test_a_key_is_renamed_whole_then_found_absent(rc: redis.Redis) -> None:
    """A hash moves with every field and its TTL; a second move finds nothing to do."""
    rc.hset(HASH.old, mapping={"a": "1", "b": "2"})
    rc.expire(HASH.old, 600)
    store = LayoutStore(rc)

    assert store.move(HASH) == "renamed"
    assert store.move(HASH) == "absent"

    assert not rc.exists(HASH.old)
    assert rc.hgetall(HASH.new) == {b"a": b"1", b"b": b"2"}
    assert 0 < rc.ttl(HASH.new) <= 600


def test_a_key_under_both_names_is_merged_the_new_content_winning(rc: redis.Redis) -> None:
    """An old key written again after a move: the new hash gains only the fields it lacks,
    the new string keeps its value, and the old keys go."""
    rc.hset(HASH.old, mapping={"a": "old", "b": "old"})
    rc.hset(HASH.new, mapping={"a": "new"})
    rc.set(TEXT.old, "old")
    rc.set(TEXT.new, "new")
    store = LayoutStore(rc)

    assert [store.move(HASH), store.move(TEXT)] == ["merged", "merged"]

    assert rc.hgetall(HASH.new) == {b"a": b"new", b"b": b"old"}
    assert rc.get(TEXT.new) == b"new"
    assert not rc.exists(HASH.old, TEXT.old)


def test_a_merge_of_two_types_is_refused_with_nothing_written(rc: redis.Redis) -> None:
    """A hash can't merge into a string: the move fails, naming both keys, and writes nothing."""
    rc.hset(HASH.old, "a", "1")
    rc.set(HASH.new, "x")

    with pytest.raises(redis.ResponseError, match="can't merge"):
        LayoutStore(rc).move(HASH)

    assert rc.hgetall(HASH.old) == {b"a": b"1"}
    assert rc.get(HASH.new) == b"x"


def test_the_layout_number_only_goes_up(rc: redis.Redis) -> None:
    """Noting step 2 then step 1 (a slower migration side by side) leaves 2."""
    store = LayoutStore(rc)
    two = Step(number=2, summary="", renames=())

    assert store.applied(two) == 2
    assert store.applied(STEPS[0]) == 2
    assert store.stored() == 2


def test_a_fresh_redis_is_given_the_codes_number(rc: redis.Redis) -> None:
    """Nothing of the old layout: the verdict is fresh, and admitting writes the number."""
    rc.set("cogworker:{new}:text", "written by this code")
    store = LayoutStore(rc)

    assert store.verdict(STEPS) == Fresh(number=1)
    assert store.admit(STEPS) == Ready()
    assert rc.get(keys.LAYOUT) == b"1"


def test_a_redis_with_old_keys_and_no_number_is_refused_and_left_alone(rc: redis.Redis) -> None:
    """One old key is enough to refuse; no number is written (migrate writes it)."""
    rc.set(TEXT.old, "an epoch")

    assert LayoutStore(rc).admit(STEPS) == Outdated(stored=0, current=1)
    assert not rc.exists(keys.LAYOUT)


def test_a_layout_number_that_is_no_number_is_named(rc: redis.Redis) -> None:
    """A damaged number is an error naming the key, never read as a layout."""
    rc.set(keys.LAYOUT, "two")

    with pytest.raises(ValueError, match=keys.LAYOUT):
        LayoutStore(rc).stored()


def test_a_report_reads_each_old_key_and_writes_nothing(rc: redis.Redis) -> None:
    """A dry run's report: the old key's type and entries (a string is one), or none."""
    rc.hset(HASH.old, mapping={"a": "1", "b": "2"})
    before = rc.dbsize()

    reports = LayoutStore(rc).report([HASH, TEXT])

    assert reports == [
        KeyReport(old=HASH.old, new=HASH.new, kind="hash", entries=2),
        KeyReport(old=TEXT.old, new=TEXT.new, kind="none", entries=0),
    ]
    assert rc.dbsize() == before


def test_lists_sets_and_sorted_sets_under_both_names_are_merged(rc: redis.Redis) -> None:
    """A straggler's list waits behind the new one's entries in its own order; a sorted set
    keeps the new scores and gains the old members; a set gains the old members."""
    queue = Rename(old="cogworker:old:list", new="cogworker:{new}:list")
    rc.lpush(queue.old, "old-1", "old-2")  # old-1 was pushed first
    rc.lpush(queue.new, "new-1", "new-2")
    waiting = Rename(old="cogworker:old:zset", new="cogworker:{new}:zset")
    rc.zadd(waiting.old, {"a": 1.0, "b": 2.0})
    rc.zadd(waiting.new, {"a": 5.0})
    members = Rename(old="cogworker:old:set", new="cogworker:{new}:set")
    rc.sadd(members.old, "x", "y")
    rc.sadd(members.new, "y", "z")
    store = LayoutStore(rc)

    assert [store.move(queue), store.move(waiting), store.move(members)] == ["merged"] * 3

    taken_in_order = [rc.rpop(queue.new) for _ in range(4)]
    assert taken_in_order == [b"new-1", b"new-2", b"old-1", b"old-2"]
    assert rc.zrange(waiting.new, 0, -1, withscores=True) == [(b"b", 2.0), (b"a", 5.0)]
    assert rc.smembers(members.new) == {b"x", b"y", b"z"}
    assert not rc.exists(queue.old, waiting.old, members.old)


#: A family of keys, named like queue lists with glob characters in them.
QUEUE_LISTS = RenameMatching(old="cogworker:old:q[*]", new="cogworker:{q:*}:new")
FAMILY_STEPS = (Step(number=1, summary="queue lists", renames=(), families=(QUEUE_LISTS,)),)


def test_a_familys_members_are_found_by_a_scan_that_reads_its_name_literally(
    rc: redis.Redis,
) -> None:
    """Found: every key named like the family's old name (its brackets literal), and no
    other; with no layout number, one member is enough to refuse."""
    for name in ("a", "b*", ""):
        rc.lpush(f"cogworker:old:q[{name}]", "job")
    rc.lpush("cogworker:old:qa", "not a member")
    store = LayoutStore(rc)

    assert store.found(FAMILY_STEPS) == {
        "cogworker:old:q[a]", "cogworker:old:q[b*]", "cogworker:old:q[]"
    }  # fmt: skip
    assert store.admit(FAMILY_STEPS) == Outdated(stored=0, current=1)
    assert not rc.exists(keys.LAYOUT)


def test_the_async_admission_scans_for_family_members_too(rc: redis.Redis, redis_url: str) -> None:
    """An AsyncClient's first write is refused the same way by a family member alone."""

    async def admit_twice() -> list[object]:
        client = redis.asyncio.Redis.from_url(redis_url)
        try:
            refused = await admit_async(client, FAMILY_STEPS)
            await client.delete("cogworker:old:q[a]")
            return [refused, await admit_async(client, FAMILY_STEPS)]
        finally:
            await client.aclose()

    rc.lpush("cogworker:old:q[a]", "job")

    assert asyncio.run(admit_twice()) == [Outdated(stored=0, current=1), Ready()]


#: Two families matching one name, told apart by the type of the key under it.
MARKERS = RenameMatching(old="cogworker:old:*:mark:*", new="cogworker:{q:*}:mark:*", kind="string")
LISTS = RenameMatching(old="cogworker:old:*", new="cogworker:{q:*}:new", kind="list")


def test_a_rename_of_a_kind_moves_only_a_key_of_that_type(rc: redis.Redis) -> None:
    """A name both families match: the family of its key's type moves it; the other finds
    nothing of its type there, writes nothing, and a dry run shows it so."""
    name = "cogworker:old:q[x]:mark:j1"
    rc.set(name, "1")
    store = LayoutStore(rc)
    as_list, as_marker = LISTS.rename(name), MARKERS.rename(name)

    assert store.report([as_list]) == [
        KeyReport(old=name, new="cogworker:{q:q[x]:mark:j1}:new", kind="none", entries=0)
    ]
    assert store.move(as_list) == "absent"
    assert store.move(as_marker) == "renamed"

    assert rc.get("cogworker:{q:q[x]}:mark:j1") == b"1"
    assert not rc.exists(name, as_list.new)


def test_counters_under_both_names_are_added_when_the_merge_says_so(rc: redis.Redis) -> None:
    """With the "add" merge (the counters' family): two whole numbers are summed, the new
    key keeping its TTL; a value that isn't one leaves the new value, as any string merge;
    the old keys go either way."""
    counters = RenameMatching(old="cogworker:st:*", new="cogworker:{q:}:st:*", merge="add")
    total, day, damaged = (counters.rename(f"cogworker:st:{name}") for name in ("n", "n:d", "x"))
    rc.set(total.old, 5)
    rc.set(total.new, -2)
    rc.set(day.old, 3)
    rc.set(day.new, 4, ex=600)
    rc.set(damaged.old, "1e3")
    rc.set(damaged.new, 7)
    store = LayoutStore(rc)

    assert [store.move(total), store.move(day), store.move(damaged)] == ["merged"] * 3

    assert [rc.get(total.new), rc.get(day.new), rc.get(damaged.new)] == [b"3", b"7", b"7"]
    assert 0 < rc.ttl(day.new) <= 600
    assert not rc.exists(total.old, day.old, damaged.old)
