"""Every Lua script, fed extreme arguments against a real Redis, either succeeds or writes
nothing: it checks its arguments before its first write (Lua doesn't roll back)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import resources

import attrs
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogworker.adapters import (
    batch_store,
    dashboard_removal,
    layout_index,
    layout_rewrite,
    layout_split,
    layout_store,
    liveness,
    periodic_store,
    scripts,
)
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs import cancel

ENTRY = '{"class":"a.B","args":[],"jid":"j1","queue":"default"}'
#: An entry claiming a concurrency place of its class's limit (the fetch takes it).
LIMITED = ENTRY.replace("}", ',"limit":{"kind":"concurrency","name":"a.B","key":"k"}}')
SHA = "1f7a5f5f3f0f0b0d31ba8d3fa3c8cb3e1b0c6b2e"  # not the entry's: parked, a write too


@attrs.frozen
class Call:
    """A script with arguments that make it write, and the data that makes it write."""

    script: scripts.LuaScript
    keys: tuple[str, ...]
    args: tuple[str, ...]
    setup: Callable[[redis.Redis], object] = lambda rc: None


def _on_list(name: str) -> Callable[[redis.Redis], object]:
    return lambda rc: rc.lpush(name, ENTRY)


LIST = keys.in_progress("default", "p1")


def _batch_with_member(rc: redis.Redis) -> object:
    return rc.hset("b", "closed", "1"), rc.sadd("bj", "j1")


SETTLE_KEYS = (
    LIST,
    keys.retry("default"),
    "s1",
    "s2",
    "s3",
    "s4",
    "o",
    "a",
    "h",
    "ch",
    "st",
    "lk",
    "rl",
    "hb",
    "mm",
    "mh",
    "mt",
    "mc",
    "lim",
    "ev",
    "rs",
    keys.located("default"),
)
LOCATED = keys.located("default")
CALLS = {
    "settle": Call(
        scripts.SETTLE,
        SETTLE_KEYS,
        (ENTRY, "1", "retry", "1700000000.5", ENTRY, "86400", "1690000000", "10", "{}", "5",
         "600", "{}", "5", "5", "600", "retrying", "600", "1700000000", "j1", "extend", "60000",
         "release", "1", "a.B", "1200", "1", "1", "1", "259200", "release",
         "b1 j1 dead", "", "60"),
        lambda rc: (rc.lpush(LIST, ENTRY), rc.set("lk", "j1")),
    ),
    "ack_many": Call(
        scripts.ACK_MANY,
        (LIST, "s1", "s2", "o", "hb", "ch", "mm", "mh", "mt", "mc", "rs", "lim", "h", "st", "lk"),
        ("1", "86400", "5", "600", "1700000000.5", "259200", "25", "1800", ENTRY, "{}", "a.B",
         "1200", "1", "1", '{"outcome":"success","value":1}', "60", "j1", "1", "complete", "j1"),
        lambda rc: (rc.lpush(LIST, ENTRY), rc.set("lk", "j1")),
    ),
    "retry_many": Call(
        scripts.RETRY_MANY,
        (LIST, keys.retry("default"), "s1", "s2", "s3", "s4", LOCATED, "o", "hb", "a", "h", "ch",
         "mm", "mh", "mt", "mc", "lim"),
        ("1", "86400", "5", "600", "5", "5", "600", "1700000000.5", "259200", ENTRY, "j1",
         "1700000000.5", ENTRY, "{}", "{}", "1", "a.B", "1200", "1", "1", "release"),
        _on_list(LIST),
    ),
    "requeue": Call(
        scripts.REQUEUE,
        (LIST, keys.queue("default"), keys.repeat_orphans("default"),
         keys.repeat_handbacks("default"), "o", "hb"),
        ("0", "3", "600", "10", SHA, "j1", "1"),
        _on_list(LIST),
    ),
    "judge_gone": Call(
        scripts.JUDGE_GONE,
        ("ph", "pw", "pm", "sus"),
        ("2", "60"),
        lambda rc: rc.hset("ph", "beat", "1"),
    ),
    "bury": Call(
        scripts.BURY,
        (LIST, keys.dead("default"), "ev", "rs", LOCATED, "o", "hb"),
        ("list", ENTRY, "1700000000", ENTRY, "0", "10", "b1 j1 dead", '{"outcome":"dead"}', "60"),
        _on_list(LIST),
    ),
    "beat": Call(
        scripts.BEAT,
        ("sus", "ph", "pw", "sig", "mem"),
        ("60", "1699999200", "2048", "1699914600", "90000", "1", "t1", "{}", "pid", "7"),
    ),
    "renew_lock": Call(
        scripts.RENEW_LOCK, ("lock",), ("j1", "60000"), lambda rc: rc.set("lock", "j1")
    ),
    "push_unique": Call(
        scripts.PUSH_UNIQUE,
        (keys.schedule("default"), "lk", "st", LOCATED),
        (ENTRY, "j1", "60000", "1700000000", "1", "600", "1700000000"),
    ),
    "push_unique, now and untracked": Call(
        scripts.PUSH_UNIQUE, (keys.queue("default"), "lk"), (ENTRY, "j1", "60000")
    ),
    "defer": Call(
        scripts.DEFER,
        (LIST, keys.schedule("default"), LOCATED),
        (ENTRY, "1700000000", ENTRY, "1", "j1"),
        _on_list(LIST),
    ),
    "limit_take": Call(
        scripts.LIMIT_TAKE, ("lim", "limw"), ("concurrency", "j1", "2", "60000", "600000")
    ),
    "limit_renew": Call(
        scripts.LIMIT_RENEW, ("lim",), ("60000", "j1"), lambda rc: rc.zadd("lim", {"j1": 9e15})
    ),
    "periodic_tick": Call(
        scripts.PERIODIC_TICK,
        ("claim", "running", keys.queue("default"), "lk", "st"),
        ("run", ENTRY, "j1", "60000", "60000", "60000", "600", "1700000000.5"),
    ),
    "periodic_advance": Call(
        scripts.PERIODIC_ADVANCE, ("sched",), ("job", "old", "new"),
        lambda rc: rc.hset("sched", "job", "old"),
    ),
    "periodic_load": Call(scripts.PERIODIC_LOAD, ("sched",), ("0", "1", "job", "entry", "gone")),
    "move_due": Call(
        scripts.MOVE_DUE,
        (keys.retry("default"), keys.queue("default"), LOCATED),
        (ENTRY, ENTRY, "j1"),
        lambda rc: rc.zadd(keys.retry("default"), {ENTRY: 1}),
    ),
    "pop": Call(
        scripts.POP,
        (keys.queue("default"), keys.queue_paused("default")),
        ("2",),
        _on_list(keys.queue("default")),
    ),
    "requeue_one": Call(
        scripts.REQUEUE_ONE,
        (LIST, keys.queue("default")),
        (ENTRY,),
        _on_list(LIST),
    ),
    "handover": Call(
        scripts.HANDOVER, (LIST, keys.unsettled("default")), (ENTRY, "{}"), _on_list(LIST)
    ),
    "release_lock": Call(scripts.RELEASE_LOCK, ("lk",), ("j1",), lambda rc: rc.set("lk", "j1")),
    "take_lock": Call(scripts.TAKE_LOCK, ("lk",), ("j1", "60000")),
    "move_key": Call(
        layout_store.MOVE_KEY, ("old", "new"), ("", "keep"), lambda rc: rc.set("old", "1")
    ),
    "raise_layout": Call(layout_store.RAISE_LAYOUT, (keys.LAYOUT,), ("1",)),
    "rewrite_entry": Call(
        layout_rewrite.REWRITE_ENTRY,
        (LIST, "old-lock", "new-lock"),
        ("list", "-1", ENTRY, LIMITED, "j1"),
        lambda rc: (rc.rpush(LIST, ENTRY), rc.set("old-lock", "j1")),
    ),
    "move_entry": Call(
        layout_split.MOVE_ENTRY,
        ("old", keys.retry("default"), LOCATED),
        (ENTRY, "zset"),
        lambda rc: rc.zadd("old", {ENTRY: 1}),
    ),
    "dashboard_remove": Call(
        dashboard_removal.REMOVE,
        (keys.retry("default"), keys.dead("default"), LOCATED, "lk", "rl", "ev", "rs"),
        ("zset", "kill", "1700000000.5", "1690000000", "10", ENTRY, "j1", "b1 j1 dead", "", "0"),
        lambda rc: (rc.zadd(keys.retry("default"), {ENTRY: 1}), rc.set("lk", "j1")),
    ),
    "pulse": Call(
        liveness.PULSE,
        ("ph", "pw", "sus"),
        ("60", "7.5"),
        lambda rc: rc.hset("ph", "beat", "0"),
    ),
    "periodic_restore": Call(
        periodic_store.PERIODIC_RESTORE, ("sched", "epoch"), ("token", "job", "entry")
    ),
    "cancel": Call(
        cancel.CANCEL,
        (keys.retry("default"), "c1", "c2", "a", "st", "lk", "rl", "ev", "rs", LOCATED),
        ("zset", ENTRY, "j1", "86400", "{}", "5", "600", "cancelled", "600", "1700000000",
         "b1 j1 cancel", '{"outcome":"cancelled"}', "60"),
        lambda rc: (rc.zadd(keys.retry("default"), {ENTRY: 1}), rc.set("lk", "j1")),
    ),
    "batch_open": Call(batch_store.BATCH_OPEN, ("b",), ("600", "1700000000", "cb:success", "{}")),
    "batch_join": Call(
        batch_store.BATCH_JOIN, ("b", "bj"), ("600", "j1"), lambda rc: rc.hset("b", "closed", "0")
    ),
    "batch_fold": Call(
        batch_store.BATCH_FOLD, ("b", "bj", "bs"), ("j1", "ack", "600"), _batch_with_member
    ),
    "batch_mark": Call(
        batch_store.BATCH_MARK, ("b", "bj", "bs"), ("success", "1", "600"), _batch_with_member
    ),
    "batch_fire": Call(batch_store.BATCH_FIRE, ("mark", keys.queue("default")), (ENTRY, "600")),
    "schedule": Call(
        scripts.SCHEDULE, (keys.schedule("default"), LOCATED), ("1700000000.5", ENTRY, "j1")
    ),
    "index_entry": Call(
        layout_index.INDEX_ENTRY,
        (keys.retry("default"), LOCATED),
        (ENTRY, "j1"),
        lambda rc: rc.zadd(keys.retry("default"), {ENTRY: 1}),
    ),
    "fetch": Call(
        scripts.FETCH,
        (LIST, keys.queue("default"), keys.queue_paused("default")),
        ("2", "a.B", "a.B", "1", "60000", "600000"),
        lambda rc: rc.lpush(keys.queue("default"), LIMITED, ENTRY),
    ),
}  # fmt: skip

#: Scripts that write nothing: nothing to leave half-written.
READ_ONLY = frozenset({"probe"})


def test_every_script_is_probed() -> None:
    """Each Lua script (but the shared files) has a call here, or only reads."""
    lua = resources.files("cogworker.adapters").joinpath("lua")
    names = {f.name.removesuffix(".lua") for f in lua.iterdir() if f.name.endswith(".lua")}
    assert (
        names - {"_checks", "_tallies", "_results", "_limit_places", "_located", "_lists"}
        == {call.script.name for call in CALLS.values()} | READ_ONLY
    )


extreme_values = st.one_of(
    st.sampled_from(
        [
            "",
            "nan",
            "-nan",
            "inf",
            "-inf",
            "1e300",
            "-1e300",
            "1e16",
            str(sys.maxsize),
            str(2**70),
            "-1",
            "0",
            "1.5",
            "0x10",
            " 5",
            "abc",
            "release",
            "1",
        ]
    ),
    st.text(max_size=20),
    st.floats().map(repr),
    st.integers().map(str),
)


def _refusal(rc: redis.Redis, call: Call, args: tuple[str, ...]) -> str | None:
    """The error a call ended with, or None if it succeeded."""
    try:
        call.script(rc, call.keys, args)
    except redis.ResponseError as error:
        return str(error)
    return None


def _writes(rc: redis.Redis) -> int:
    return int(rc.info("persistence")["rdb_changes_since_last_save"])


@settings(
    max_examples=40 * len(CALLS),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    name=st.sampled_from(sorted(name for name, call in CALLS.items() if call.args)),
    data=st.data(),
    value=extreme_values,
)
def test_a_script_given_an_extreme_argument_succeeds_or_writes_nothing(
    rc: redis.Redis, name: str, data: st.DataObject, value: str
) -> None:
    """One argument replaced by an extreme value: an error leaves Redis untouched."""
    call = CALLS[name]
    rc.flushall()
    call.setup(rc)
    index = data.draw(st.integers(min_value=0, max_value=len(call.args) - 1), label="index")
    args = (*call.args[:index], value, *call.args[index + 1 :])
    before = _writes(rc)
    refused = _refusal(rc, call, args)
    assert refused is None or _writes(rc) == before, f"{name} wrote, then: {refused}"


@settings(
    max_examples=len(CALLS) * 3,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=st.sampled_from(sorted(CALLS)))
def test_each_baseline_call_writes(rc: redis.Redis, name: str) -> None:
    """The baselines are worth probing: unchanged, each call writes something."""
    call = CALLS[name]
    rc.flushall()
    call.setup(rc)
    before = _writes(rc)
    call.script(rc, call.keys, call.args)
    assert _writes(rc) > before


def test_push_unique_refuses_keys_and_arguments_of_different_forms(rc: redis.Redis) -> None:
    """Its tail (scheduled or tracked) comes whole or not at all: half of it writes nothing."""
    rc.flushall()
    full = CALLS["push_unique"]
    short = CALLS["push_unique, now and untracked"]
    for mixed in (
        Call(full.script, short.keys, full.args),
        Call(full.script, full.keys, short.args),
    ):
        refused = _refusal(rc, mixed, mixed.args)
        assert refused is not None
        assert "expected 2 and 3 or 4 and 7" in refused
        assert rc.dbsize() == 0
