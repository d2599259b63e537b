"""Per-class metrics as the settling scripts write them, read back and merged over queues."""

from __future__ import annotations

import attrs
import redis
from redis.crc import key_slot

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.class_metrics import ClassMetricsStore
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeKind, OutcomeRecord
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain.class_metrics import RunSample, Tally, hour_of, minute_of

IDENTITY = "host:1:test"
NOW = 1_800_000_000.0
CLASS = "app.Report"


def _held(
    rc: redis.Redis, jid: str, queue: str, micros: int, kind: OutcomeKind = "ack"
) -> SettleOrder:
    """A job of CLASS from `queue` on IDENTITY's in-progress list, run for `micros`, with
    `kind` as its outcome (an ack plain, so that it goes through ack_many)."""
    raw = f'{{"jid":"{jid}","class":"{CLASS}","queue":"{queue}"}}'.encode()
    rc.lpush(keys.in_progress(queue, IDENTITY), raw)
    sample = RunSample(queue=queue, micros=micros, failed=kind != "ack")
    outcome = OutcomeRecord(
        kind=kind,
        jid=jid,
        class_name=CLASS,
        score=NOW,
        payload="{}" if kind != "ack" else "",
        history_per_job=kind != "ack",
        sample=sample,
    )
    return SettleOrder(fetched=Fetched(queue=queue, raw=raw), outcome=outcome)


def _samples(batch: list[SettleOrder]) -> list[RunSample]:
    return [order.outcome.sample for order in batch if order.outcome.sample is not None]


def test_runs_on_two_queues_are_counted_once_each_and_merged(rc: redis.Redis) -> None:
    """Acks (one script call) and failures (one each) on two queues: the class's total,
    hour and minute hold every run once, failures apart, merged over the queues."""
    store = SettleStore(rc)
    batch = [
        _held(rc, "j1", "default", 1_200),
        _held(rc, "j2", "mail", 40_000),
        _held(rc, "j3", "default", 900, kind="retry"),
        _held(rc, "j4", "mail", 7_000_000, kind="dead"),
        _held(rc, "j5", "default", 2_000),
    ]
    assert store.settle_many(IDENTITY, batch, NOW) == [True] * 5

    expected = Tally.of(_samples(batch))
    metrics = ClassMetricsStore(rc)
    assert metrics.classes() == {"default": (CLASS,), "mail": (CLASS,)}
    assert metrics.totals().tallies == {CLASS: expected}
    assert metrics.over_hours(NOW, 1).tallies == {CLASS: expected}
    assert metrics.by_minute(CLASS, NOW, 1) == {minute_of(NOW): expected}
    assert expected.runs == 5
    assert expected.failures == 2


def test_a_repeated_batch_counts_nothing_twice(rc: redis.Redis) -> None:
    """A batch sent again (its reply lost) finds no entry and adds no run."""
    store = SettleStore(rc)
    batch = [_held(rc, f"j{n}", "default", 1_000 * n) for n in range(3)]
    batch.append(_held(rc, "j9", "default", 5_000, kind="retry"))
    store.settle_many(IDENTITY, batch, NOW)
    assert store.settle_many(IDENTITY, batch, NOW) == [False] * 4
    assert ClassMetricsStore(rc).totals().tallies == {CLASS: Tally.of(_samples(batch))}


def test_every_metrics_key_lives_in_its_queues_slot_and_expires(rc: redis.Redis) -> None:
    """An ack and a retry: the hashes and the registry carry the queue's hash tag, and
    the retention's TTL."""
    store = SettleStore(rc, Retention(metrics_ttl=3600))
    store.settle_many(IDENTITY, [_held(rc, "j1", "a{b}", 1_000)], NOW)
    failed = _held(rc, "j2", "a{b}", 1_000, kind="retry")
    store.settle(IDENTITY, failed, NOW)
    written = sorted(key.decode() for key in rc.scan_iter("cogworker:{q:*}:metrics:*"))
    assert written == sorted(
        [
            keys.metrics_minute("a{b}", CLASS, minute_of(NOW)),
            keys.metrics_hour("a{b}", CLASS, hour_of(NOW)),
            keys.metrics_total("a{b}", CLASS),
            keys.metrics_classes("a{b}"),
        ]
    )
    # The slot the cluster layout gives the queue's own keys (docs/redis-cluster.md).
    assert {key_slot(key.encode()) for key in written} == {key_slot(b"cogworker:{q:a{b}}:queue")}
    assert all(3500 < rc.ttl(key) <= 3600 for key in written)
    assert rc.smembers(keys.PARTS) == {b"a{b}"}


def test_classes_run_one_after_another_all_stay_registered(rc: redis.Redis) -> None:
    """An ack, a retry, a death of three classes, each its own call: all three are read."""
    store = SettleStore(rc)
    kinds: tuple[OutcomeKind, ...] = ("ack", "retry", "dead")
    for n, kind in enumerate(kinds):
        order = _held(rc, f"j{n}", "default", 1_000, kind=kind)
        renamed = attrs.evolve(order, outcome=attrs.evolve(order.outcome, class_name=f"app.C{n}"))
        store.settle_many(IDENTITY, [renamed], NOW + n)
    tallies = ClassMetricsStore(rc).totals().tallies
    assert {name: (t.runs, t.failures) for name, t in tallies.items()} == {
        "app.C0": (1, 0),
        "app.C1": (1, 1),
        "app.C2": (1, 1),
    }


def test_a_class_that_stopped_running_leaves_the_registry(rc: redis.Redis) -> None:
    """A class whose last run is older than the retention is dropped at the next write."""
    store = SettleStore(rc, Retention(metrics_ttl=3600))
    old = _held(rc, "j1", "default", 1_000)
    store.settle_many(IDENTITY, [old], NOW)
    other = _held(rc, "j2", "default", 1_000)
    newer = SettleOrder(
        fetched=other.fetched,
        outcome=OutcomeRecord(kind="ack", jid="j2", class_name="app.Other",
                              history_per_job=False, sample=other.outcome.sample),
    )  # fmt: skip
    store.settle_many(IDENTITY, [newer], NOW + 3601)
    assert ClassMetricsStore(rc).classes() == {"default": ("app.Other",)}


def test_a_class_is_refreshed_once_a_minute_per_store(rc: redis.Redis) -> None:
    """A class's registry score and total TTL are renewed by a store's first run of it in
    a minute, not by every run: hot-path commands cost."""
    store = SettleStore(rc, Retention(metrics_ttl=3600))
    total, registry = keys.metrics_total("default", CLASS), keys.metrics_classes("default")
    store.settle_many(IDENTITY, [_held(rc, "j1", "default", 1_000)], NOW)
    rc.expire(total, 100)
    store.settle_many(IDENTITY, [_held(rc, "j2", "default", 1_000)], NOW + 30)
    assert rc.zscore(registry, CLASS) == NOW
    assert rc.ttl(total) <= 100
    store.settle(IDENTITY, _held(rc, "j3", "default", 1_000, kind="retry"), NOW + 61)
    assert rc.zscore(registry, CLASS) == NOW + 61
    assert rc.ttl(total) > 3500
    assert ClassMetricsStore(rc).totals().tallies[CLASS].runs == 3


def test_a_minute_gets_its_ttl_when_created(rc: redis.Redis) -> None:
    """Later runs of the same minute add to its hash without renewing its TTL."""
    store = SettleStore(rc, Retention(metrics_ttl=3600))
    minute = keys.metrics_minute("default", CLASS, minute_of(NOW))
    store.settle_many(IDENTITY, [_held(rc, "j1", "default", 1_000)], NOW)
    assert 3500 < rc.ttl(minute) <= 3600
    rc.expire(minute, 100)
    store.settle_many(IDENTITY, [_held(rc, "j2", "default", 1_000)], NOW + 1)
    assert rc.ttl(minute) <= 100
    assert rc.hget(minute, "t") == b"2000"


def test_a_run_without_a_sample_writes_no_metrics(rc: redis.Redis) -> None:
    """Metrics off (or a job that never ran): the settlement writes no metrics key."""
    order = _held(rc, "j1", "default", 1_000)
    unmeasured = SettleOrder(
        fetched=order.fetched,
        outcome=OutcomeRecord(kind="ack", jid="j1", class_name=CLASS, history_per_job=False),
    )
    assert SettleStore(rc).settle_many(IDENTITY, [unmeasured], NOW) == [True]
    assert list(rc.scan_iter("cogworker:{q:*}:metrics:*")) == []
    assert ClassMetricsStore(rc).totals().tallies == {}


def test_a_hash_that_holds_something_else_is_named_and_left_out(rc: redis.Redis) -> None:
    """A damaged tally hash doesn't blank the reading: it is left out, with a sentence."""
    SettleStore(rc).settle_many(IDENTITY, [_held(rc, "j1", "default", 1_000)], NOW)
    rc.hset(keys.metrics_total("default", CLASS), "t", "many")
    reading = ClassMetricsStore(rc).totals()
    assert reading.tallies == {}
    total = keys.metrics_total("default", CLASS)
    assert reading.problems == {f"{total} holds no per-class metrics"}
