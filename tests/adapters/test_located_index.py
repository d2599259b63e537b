"""The jid index of each queue's scheduled, retry and dead sets (`adapters.located`) names
exactly what the sets hold, after any sequence of the writes that file entries there or
take them off, each made as the engine or the dashboard makes it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogworker.adapters import layout_index, located
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_removal import Removal
from cogworker.adapters.dashboard_sets import SetStore
from cogworker.adapters.jobs.cancel import CancelStore, Waiting
from cogworker.adapters.jobs.due import DueStore
from cogworker.adapters.jobs.enqueue import EnqueueStore, UniquePush
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain import payload
from cogworker.domain.job import JobRecord
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:located"
QUEUES = ("default", "mail")
NOW = 1_800_000_000.25
#: Few dead entries kept per queue, for a short time: both trimmings run often.
KEPT = Retention(dead_max_jobs=2, dead_max_age=500)

#: One write: (Redis, its queue, its jid, a number making its score) -> nothing.
Write = Callable[[redis.Redis, str, str, int], object]


def _raw(queue: str, jid: str) -> bytes:
    return json.dumps({"class": "app.Send", "args": [1], "jid": jid, "queue": queue}).encode()


def _held(rc: redis.Redis, queue: str, jid: str) -> Fetched:
    rc.lpush(keys.in_progress(queue, IDENTITY), _raw(queue, jid))
    return Fetched(queue=queue, raw=_raw(queue, jid))


def _settle(kind: Literal["retry", "dead"], *, batched: bool = False) -> Write:
    def write(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
        payload = _raw(queue, jid).decode()
        outcome = OutcomeRecord(
            kind=kind, jid=jid, class_name="app.Send", score=NOW + n, payload=payload, attempt="{}"
        )
        order = SettleOrder(fetched=_held(rc, queue, jid), outcome=outcome)
        store = SettleStore(rc, retention=KEPT)
        if batched:  # a plain retry in the acker's batch: its queue's retry_many
            store.settle_many(IDENTITY, [order], NOW)
        else:
            store.settle(IDENTITY, order, NOW)

    return write


def _schedule(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
    EnqueueStore(rc).push_all({}, {queue: [(NOW + n, _raw(queue, jid).decode(), jid)]})


def _schedule_unique(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
    lock = keys.unique_lock(queue, f"app.Send:{jid}:{n}")
    push = UniquePush(queue=queue, payload=_raw(queue, jid).decode(), jid=jid, lock=lock,
                      ttl=60, at=NOW + n)  # fmt: skip
    EnqueueStore(rc).push_unique([push], NOW)


def _defer(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
    RunStore(rc).defer(IDENTITY, _held(rc, queue, jid), NOW + n, jid=jid)


def _entries(rc: redis.Redis, name: str, queue: str) -> list[bytes]:
    return [bytes(member) for member in rc.zrange(keys.sorted_set(name, queue), 0, -1)]


def _with_jid(rc: redis.Redis, name: str, queue: str, jid: str) -> list[bytes]:
    return [e for e in _entries(rc, name, queue) if json.loads(e)["jid"] == jid]


def _move_due(name: str) -> Write:
    def write(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
        sorted_set = keys.sorted_set(name, queue)
        moves = [(e, queue, e.decode()) for e in _with_jid(rc, name, queue, jid)]
        DueStore(rc).move_due(sorted_set, moves)

    return write


def _cancel(name: str) -> Write:
    def write(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
        job = JobRecord(class_name="app.Send", queue=queue, jid=jid)
        for entry in _with_jid(rc, name, queue, jid):
            waiting = Waiting(key=keys.sorted_set(name, queue), kind="zset", entry=entry, job=job)
            CancelStore(rc).remove(waiting, OutcomeRecord(kind="cancel", jid=jid, attempt="{}"),
                                   NOW)  # fmt: skip

    return write


def _dashboard(name: str, action: str) -> Write:
    def write(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
        sets, sorted_set = SetStore(rc, KEPT), keys.sorted_set(name, queue)
        removals = [Removal(entry=e, jid=jid, queue=queue)
                    for e in _with_jid(rc, name, queue, jid)]  # fmt: skip
        if action == "kill":
            sets.kill(sorted_set, queue, removals, NOW + n)
        else:
            sets.delete(sorted_set, queue, removals)

    return write


def _bury(name: str) -> Write:
    def write(rc: redis.Redis, queue: str, jid: str, n: int) -> None:
        for entry in _with_jid(rc, name, queue, jid):
            filed = entry.decode()
            RecoverStore(rc, retention=KEPT).bury(
                keys.sorted_set(name, queue), "zset", entry, filed, NOW + n, jid=jid, queue=queue
            )

    return write


WRITES: dict[str, Write] = {
    "settle a retry": _settle("retry"),
    "settle a retry in a batch": _settle("retry", batched=True),
    "settle a death": _settle("dead"),
    "schedule": _schedule,
    "schedule a unique job": _schedule_unique,
    "defer": _defer,
    **{f"move a due {name}": _move_due(name) for name in ("schedule", "retry")},
    **{f"cancel a {name}": _cancel(name) for name in ("schedule", "retry")},
    **{
        f"{action} from {name}": _dashboard(name, action)
        for name in keys.SET_NAMES
        for action in ("delete", "kill")
        if (name, action) != ("dead", "kill")
    },
    **{f"bury from {name}": _bury(name) for name in ("schedule", "retry")},
}


def expected_index(rc: redis.Redis, queue: str) -> dict[bytes, bytes]:
    """What the index of `queue` must hold: an entry per jid its sets hold."""
    found: dict[bytes, bytes] = {}
    for name in keys.SET_NAMES:
        for member, score in rc.zrange(keys.sorted_set(name, queue), 0, -1, withscores=True):
            jid = layout_index.jid_of(bytes(member))
            if jid:
                found[jid.encode()] = located.value(name, float(score)).encode()
    return found


writes = st.lists(
    st.tuples(
        st.sampled_from(sorted(WRITES)),
        st.sampled_from(QUEUES),
        st.sampled_from(["j1", "j2", "j3", "j4", "j5"]),
        st.integers(0, 1_000),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(sequence=writes)
def test_the_index_names_exactly_what_the_sets_hold_after_any_writes(
    rc: redis.Redis, sequence: list[tuple[str, str, str, int]]
) -> None:
    """Each write in turn (a jid in at most one set of its queue at a time, as the engine
    keeps it: a write filing a jid already filed is skipped); after each, every queue's
    index holds one entry per jid its sets hold, naming its set and score, and no other."""
    rc.flushall()
    for name, queue, jid, n in sequence:
        filing = name.startswith(("settle", "schedule", "defer"))
        if filing and any(_with_jid(rc, s, queue, jid) for s in keys.SET_NAMES):
            continue
        WRITES[name](rc, queue, jid, n)
        for each in QUEUES:
            held = rc.hgetall(keys.located(each))
            assert held == expected_index(rc, each), (name, queue, jid)


def test_a_migrated_set_is_indexed_by_the_layout_step(rc: redis.Redis) -> None:
    """Entries filed before the index (written by hand, as an older release did): the step
    notes each, skips one naming no jid, and writes the same when run again."""
    rc.sadd(keys.PARTS, "default")
    rc.zadd(keys.retry("default"), {_raw("default", "old1"): NOW, b"not a job": NOW})
    rc.zadd(keys.dead(""), {_raw("gone", "old2"): NOW - 5})
    for _ in range(2):
        for name in keys.SET_NAMES:
            layout_index.index_all(rc, name)
        assert rc.hgetall(keys.located("default")) == expected_index(rc, "default")
        assert rc.hgetall(keys.located("")) == expected_index(rc, "")
    assert rc.hget(keys.located("default"), "old1") == located.value("retry", NOW).encode()


def test_the_dead_set_s_trimmings_take_their_entries_out_of_the_index(rc: redis.Redis) -> None:
    """Past the most kept, the oldest go with their index entries; so do the entries a
    kill long after (past the most kept age) trims."""
    for n, jid in enumerate(("j1", "j2", "j3")):
        WRITES["settle a death"](rc, "default", jid, n)
    assert set(rc.hgetall(keys.located("default"))) == {b"j2", b"j3"}
    WRITES["schedule"](rc, "default", "j4", 0)
    WRITES["kill from schedule"](rc, "default", "j4", 1_000)
    assert rc.hgetall(keys.located("default")) == expected_index(rc, "default")
    assert set(rc.hgetall(keys.located("default"))) == {b"j4"}


def test_an_unreadable_entry_filed_in_dead_leaves_the_index_with_its_deletion(
    rc: redis.Redis,
) -> None:
    """The poller files an entry that isn't a job in dead under a new jid (noted there);
    the dashboard, which can't read it as a job, deletes it without its jid: its note goes
    all the same."""
    rc.sadd(keys.PARTS, "default")
    rc.zadd(keys.schedule("default"), {b"not a job": NOW})
    problem = payload.PayloadError(problem=payload.PayloadProblem.BAD_FIELD, detail="test")
    RecoverStore(rc).bury_unreadable((keys.schedule("default"), "zset"), b"not a job", problem,
                                     jid="filed-as", now=NOW, queue="default")  # fmt: skip
    assert set(rc.hgetall(keys.located("default"))) == {b"filed-as"}
    (wrapped,) = _entries(rc, "dead", "default")
    SetStore(rc, KEPT).delete(
        keys.dead("default"), "default", [Removal(entry=wrapped, queue="default")]
    )
    assert rc.hgetall(keys.located("default")) == {}
