"""Settling a batch: plain acks share one script call, the rest settle one by one, in order."""

from __future__ import annotations

import attrs
import redis
from redis.crc import key_slot

from cogworker import tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.retention import DAY_COUNTER_TTL, Retention
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain.stats import day_of
from tests.support.topology_marks import on_both_topologies, single_node_only
from tests.tracking.test_tracking import CountingConnection

pytestmark = on_both_topologies

IDENTITY = "host:1:test"
NOW = 1_800_000_000.0


def _held(rc: redis.Redis, jid: str, queue: str = "default") -> SettleOrder:
    """A job of `queue` on IDENTITY's in-progress list, with a plain ack as its outcome."""
    raw = f'{{"jid":"{jid}","class":"app.Plain","queue":"{queue}"}}'.encode()
    rc.lpush(keys.in_progress(queue, IDENTITY), raw)
    outcome = OutcomeRecord(
        kind="ack",
        jid=jid,
        class_name="app.Plain",
        history=f'{{"jid":"{jid}"}}',
        history_per_job=False,
    )
    return SettleOrder(fetched=Fetched(queue=queue, raw=raw), outcome=outcome)


def test_a_batch_writes_each_owned_ack_once_and_reports_which(rc: redis.Redis) -> None:
    """Acks still on the list are written; one another process took is reported False."""
    store = SettleStore(rc, Retention(history_per_class=2))
    batch = [_held(rc, f"j{n}") for n in range(4)]
    rc.lrem(keys.in_progress("default", IDENTITY), 1, batch[1].fetched.raw)  # recovered by another
    rc.set(keys.orphanings("default", "j0"), 2)

    assert store.settle_many(IDENTITY, batch, NOW) == [True, False, True, True]

    assert rc.llen(keys.in_progress("default", IDENTITY)) == 0
    assert rc.get(keys.stat("default", "processed")) == b"3"
    today = keys.stat("default", "processed", day_of(NOW))
    assert rc.get(today) == b"3"
    assert 0 < rc.ttl(today) <= DAY_COUNTER_TTL
    assert not rc.exists(keys.orphanings("default", "j0"))
    # Newest first, trimmed to the class's cap, with the history TTL.
    history = keys.class_history("default", "app.Plain")
    assert rc.lrange(history, 0, -1) == [b'{"jid":"j3"}', b'{"jid":"j2"}']
    assert rc.ttl(history) > 0


def test_acks_of_several_queues_are_counted_each_on_its_own_queue(rc: redis.Redis) -> None:
    """A batch mixing two queues (and a failure on a third): every reply at its place, each
    queue's counters and class history in its own slot holding its own jobs, the queues
    registered as parts, and the merged reads summing and merging them."""
    store = SettleStore(rc)
    batch = [_held(rc, f"j{n}", queue) for n, queue in enumerate(["mail", "a{b}", "mail", "a{b}"])]
    failed = _held(rc, "j4", "reports")
    failed = attrs.evolve(failed, outcome=OutcomeRecord(kind="discard", jid="j4"))
    rc.lrem(keys.in_progress("a{b}", IDENTITY), 1, batch[3].fetched.raw)  # recovered by another

    assert store.settle_many(IDENTITY, [*batch, failed], NOW) == [True, True, True, False, True]

    today = day_of(NOW)
    written = {key.decode(): rc.get(key) for key in sorted(rc.scan_iter("cogworker:{q:*}:stat:*"))}
    assert written == {
        keys.stat("mail", "processed"): b"2",
        keys.stat("mail", "processed", today): b"2",
        keys.stat("a{b}", "processed"): b"1",
        keys.stat("a{b}", "processed", today): b"1",
        keys.stat("reports", "processed"): b"1",
        keys.stat("reports", "processed", today): b"1",
        keys.stat("reports", "failed"): b"1",
        keys.stat("reports", "failed", today): b"1",
    }
    slots = {key_slot(key.encode()) for key in written if "{q:mail}" in key}
    assert slots == {key_slot(b"cogworker:{q:mail}:queue")}
    assert rc.smembers(keys.PARTS) == {b"mail", b"a{b}", b"reports"}
    assert tracking.totals(rc) == {"processed": 4, "failed": 1}
    assert tracking.daily_counts(rc, "processed", NOW, 2) == {day_of(NOW - 86_400): 0, today: 4}
    histories = {queue: rc.lrange(keys.class_history(queue, "app.Plain"), 0, -1)
                 for queue in ("mail", "a{b}")}  # fmt: skip
    assert histories == {"mail": [b'{"jid":"j2"}', b'{"jid":"j0"}'], "a{b}": [b'{"jid":"j1"}']}


@single_node_only  # counts one server's round trips: a cluster's, one per node
def test_a_batch_of_several_queues_is_one_round_trip(redis_url: str, rc: redis.Redis) -> None:
    """Acks of three queues (one ack_many each), their parts' registration and a failure:
    one packet sent to Redis, every outcome written."""
    pool = redis.ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    client = redis.Redis(connection_pool=pool)
    client.ping()
    batch = [_held(rc, f"j{n}", queue) for n, queue in enumerate(["a", "b", "c", "a"])]
    failed = _held(rc, "j4", "b")
    failed = attrs.evolve(failed, outcome=OutcomeRecord(kind="discard", jid="j4"))
    CountingConnection.sent = 0

    assert SettleStore(client).settle_many(IDENTITY, [*batch, failed], NOW) == [True] * 5

    assert CountingConnection.sent == 1
    assert tracking.totals(rc) == {"processed": 5, "failed": 1}
    assert not [
        rc.llen(keys.in_progress(q, IDENTITY))
        for q in "abc"
        if rc.llen(keys.in_progress(q, IDENTITY))
    ]


def test_a_repeated_batch_writes_nothing(rc: redis.Redis) -> None:
    """A batch sent again (its reply lost) finds no entry and counts nothing twice."""
    store = SettleStore(rc)
    batch = [_held(rc, f"j{n}") for n in range(3)]
    assert store.settle_many(IDENTITY, batch, NOW) == [True] * 3
    assert store.settle_many(IDENTITY, batch, NOW) == [False] * 3
    assert rc.get(keys.stat("default", "processed")) == b"3"
    assert rc.llen(keys.class_history("default", "app.Plain")) == 3


def test_plain_and_other_outcomes_mixed_keep_their_order(rc: redis.Redis) -> None:
    """A tracked success and a dead job between plain acks: each reply at its own place."""
    store = SettleStore(rc)
    plain_first, tracked, dead, plain_last = (_held(rc, f"j{n}") for n in range(4))
    tracked = SettleOrder(
        fetched=tracked.fetched, outcome=OutcomeRecord(kind="ack", jid="j1", status="complete")
    )
    rc.lrem(keys.in_progress("default", IDENTITY), 1, dead.fetched.raw)
    dead = SettleOrder(
        fetched=dead.fetched, outcome=OutcomeRecord(kind="dead", jid="j2", score=NOW, payload="{}")
    )

    assert store.settle_many(IDENTITY, [plain_first, tracked, dead, plain_last], NOW) == [
        True,
        True,
        False,
        True,
    ]
    assert rc.hget(keys.status("default", "j1"), "status") == b"complete"
    assert rc.zcard(keys.dead("default")) == 0
    assert rc.get(keys.stat("default", "processed")) == b"3"


def test_tracked_and_unique_successes_share_the_batch_s_one_call(rc: redis.Redis) -> None:
    """A tracked success with its own history and a unique one are acked in the batch's
    one call: status complete with its TTL, the run in the job's own list too, its jid
    index entry; a unique lock let go of only while it names the jid."""
    store = SettleStore(rc, Retention(status_ttl=600, history_per_job=1))
    tracked, unique, taken_over = (_held(rc, f"j{n}") for n in range(3))
    tracked = attrs.evolve(
        tracked,
        outcome=attrs.evolve(tracked.outcome, status="complete", history_per_job=True),
    )
    rc.lpush(keys.history("default", "j0"), b'{"jid":"j0","earlier":true}')
    lock, other_lock = keys.unique_lock("default", "u1"), keys.unique_lock("default", "u2")
    rc.set(lock, "j1")
    rc.set(other_lock, "a later push's jid")  # j2's lock ran out and was taken again
    unique, taken_over = (
        attrs.evolve(
            order, outcome=attrs.evolve(order.outcome, unique_lock=name, unique_action="release")
        )
        for order, name in ((unique, lock), (taken_over, other_lock))
    )

    assert store.settle_many(IDENTITY, [tracked, unique, taken_over], NOW) == [True] * 3

    assert rc.hgetall(keys.status("default", "j0")) == {
        b"status": b"complete",
        b"update_time": repr(NOW).encode(),
    }
    assert 0 < rc.ttl(keys.status("default", "j0")) <= 600
    assert rc.lrange(keys.history("default", "j0"), 0, -1) == [b'{"jid":"j0"}']
    assert rc.ttl(keys.history("default", "j0")) > 0
    assert rc.get(keys.jid_index("j0")) is not None
    assert not rc.exists(keys.status("default", "j1"), keys.history("default", "j1"))
    assert not rc.exists(lock)
    assert rc.get(other_lock) == b"a later push's jid"
    assert rc.get(keys.stat("default", "processed")) == b"3"


def test_basic_fetch_acks_have_no_list_to_check(rc: redis.Redis) -> None:
    """Without an identity (basic fetch) every ack is written and counted."""
    store = SettleStore(rc)
    batch = [_held(rc, f"j{n}") for n in range(2)]
    rc.delete(keys.in_progress("default", IDENTITY))
    assert store.settle_many(None, batch, NOW) == [True, True]
    assert rc.get(keys.stat("default", "processed")) == b"2"


def test_working_marks_go_first_and_leave_each_outcome_at_its_place(rc: redis.Redis) -> None:
    """Marks of jobs still running are written with their start; the outcomes' replies stay."""
    store = SettleStore(rc, Retention(status_ttl=600))
    plain, tracked = _held(rc, "j0"), _held(rc, "j1")
    tracked = SettleOrder(
        fetched=tracked.fetched, outcome=OutcomeRecord(kind="ack", jid="j1", status="complete")
    )
    started = NOW - 5

    written = store.settle_many(
        IDENTITY,
        [plain, tracked],
        NOW,
        working={"running": ("default", started), "other": ("default", started + 1)},
    )

    assert written == [True, True]
    assert rc.hgetall(keys.status("default", "running")) == {
        b"status": b"working",
        b"update_time": repr(started).encode(),
    }
    assert 0 < rc.ttl(keys.status("default", "running")) <= 600
    assert rc.hget(keys.status("default", "other"), "status") == b"working"
    assert rc.hget(keys.status("default", "j1"), "status") == b"complete"


def test_a_batch_of_marks_only_writes_them(rc: redis.Redis) -> None:
    """A long job's mark goes out even when no job finished meanwhile."""
    store = SettleStore(rc)
    assert store.settle_many(IDENTITY, [], NOW, working={"long": ("default", NOW)}) == []
    assert rc.hget(keys.status("default", "long"), "status") == b"working"


def test_a_cancel_and_an_expiry_are_counted_apart_and_file_nothing(rc: redis.Redis) -> None:
    """Cancelled and expired: counted in processed and their own counters (not failed),
    their attempt and status written, their unique lock let go of, nothing filed."""
    store = SettleStore(rc)
    orders = []
    for n, (kind, status) in enumerate((("cancel", "cancelled"), ("expire", "expired"))):
        held = _held(rc, f"j{n}")
        rc.set(keys.unique_lock("default", str(n)), f"j{n}")
        outcome = OutcomeRecord(
            kind=kind, jid=f"j{n}", class_name="app.Plain", attempt='{"outcome":"x"}',
            status=status, unique_lock=keys.unique_lock("default", str(n)), unique_action="release",
        )  # fmt: skip
        orders.append(SettleOrder(fetched=held.fetched, outcome=outcome))
    rc.set(keys.unique_lock("default", "1"), "someone-else")

    assert store.settle_many(IDENTITY, orders, NOW) == [True, True]

    counts = {
        name: rc.get(keys.stat("default", name)) for name in ("processed", "cancelled", "expired")
    }
    assert counts == {"processed": b"2", "cancelled": b"1", "expired": b"1"}
    assert rc.get(keys.stat("default", "failed")) is None
    assert rc.zcard(keys.retry("default")) == rc.zcard(keys.dead("default")) == 0
    assert not rc.exists(keys.unique_lock("default", "0"))
    assert rc.get(keys.unique_lock("default", "1")) == b"someone-else"  # owner-checked
    assert rc.hget(keys.status("default", "j0"), "status") == b"cancelled"
    assert rc.llen(keys.job_attempts("default", "j1")) == 1
