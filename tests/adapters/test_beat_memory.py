"""The heartbeat script's memory history against the Python model (domain/memory.py)."""

from __future__ import annotations

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.domain import memory

NOW = 1_700_000_000.0
IDENTITY = "host:1:abc"

slots = st.integers(min_value=-2 * memory.SLOTS, max_value=2).map(
    lambda index: memory.slot_of(NOW) + index * memory.SAMPLE_SECONDS
)
readings = st.integers(min_value=0, max_value=2**40)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stored=st.dictionaries(slots, readings, max_size=12),
    reading=st.none() | readings,
    later=st.floats(min_value=0, max_value=3 * memory.SAMPLE_SECONDS),
)
def test_a_beat_keeps_each_slots_peak_as_the_model_does(
    rc: redis.Redis, stored: dict[int, int], reading: int | None, later: float
) -> None:
    """Whatever the history held, one beat leaves exactly what `memory.recorded` says."""
    history = keys.memory_history(IDENTITY)
    rc.delete(history)
    if stored:
        rc.zadd(history, {memory.member_of(slot, kib): slot for slot, kib in stored.items()})
    now = NOW + later
    fields = {} if reading is None else {"rss_kb": reading}
    ProcessRegistry(rc).beat(IDENTITY, fields, {}, 60, now)
    left = {}
    for member in rc.zrange(history, 0, -1):
        parsed = memory.parse_member(member)
        assert parsed is not None
        left[parsed[0]] = parsed[1]
    assert left == memory.recorded(stored, memory.slot_of(now), reading, now)


def test_a_wrong_typed_memory_key_does_not_cost_the_beat(rc: redis.Redis) -> None:
    """A string where the history should be: presence, workers and signals still land."""
    rc.set(keys.memory_history(IDENTITY), "not a sorted set")
    rc.rpush(keys.signal(IDENTITY), "quiet")
    registry = ProcessRegistry(rc)
    reply = registry.beat(IDENTITY, {"rss_kb": 1024}, {"t1": "{}"}, 60, NOW)
    assert reply.signals == ["quiet"]
    assert rc.sismember(keys.PROCESSES, IDENTITY)
    assert rc.hget(keys.workers(IDENTITY), "t1") == b"{}"
    assert b"WRONGTYPE" in (rc.hget(keys.process(IDENTITY), "memory_error") or b"")
    rc.delete(keys.memory_history(IDENTITY))
    registry.beat(IDENTITY, {"rss_kb": 1024}, {}, 60, NOW)
    assert rc.hget(keys.process(IDENTITY), "memory_error") is None
