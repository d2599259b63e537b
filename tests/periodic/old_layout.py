"""A Redis as the release before layout step 1 left it, and every key of a Redis as a value,
to compare a migration's before and after (tests/periodic/test_migrate.py)."""

from __future__ import annotations

import json
from typing import Any

import attrs
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jid_index import RECORDS_ONLY
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.handover import handover_record
from cogworker.adapters.jobs.outcome import OutcomeKind, OutcomeRecord
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.periodic_store import encode_entry
from cogworker.app.periodic_runs import scheduled_entry
from cogworker.domain import unique
from cogworker.domain.records import AttemptRecord, RunRecord, to_json
from tests.app.jobs import Record, RecordHeavy
from tests.periodic.jobs import hourly, merging
from tests.tracking.jobs import TrackedUnique

#: Where that release kept the periodic schedule and its epoch (written out here, not
#: taken from the code under test: they are what an existing deployment holds).
OLD_SCHEDULE = "cogworker:periodic:schedule"
OLD_EPOCH = "cogworker:periodic:epoch"
#: A queue's list before step 2: named by the queue alone, no hash tag.
OLD_QUEUE = "cogworker:queue:{}"
#: Queues written by hand, besides those the client pushed to, their jobs newest first (as
#: pushed on the left): one whose name holds a hash tag and glob characters, and one whose
#: list the old release named as it named a marker of a queue with a tag (only its type
#: tells).
ODD_QUEUE = "odd{tag}*?q"
HAND_QUEUES = {
    ODD_QUEUE: [b"odd-3", b"odd-2", b"odd-1"],
    "cb": [b"callback"],
    "{t}:batch_callback:0123456789abcdef01234567-complete": [b"marker-like"],
}
#: A batch callback's markers before step 2 (`batch_fire`), by queue and jid: named in the
#: slot of the queue's list, by its whole name as the tag, or by the tag its name holds.
CALLBACK_JID = "0123456789abcdef01234567-success"
OLD_MARKERS = {
    ("cb", CALLBACK_JID): "{cogworker:queue:cb}:batch_callback:" + CALLBACK_JID,
    (ODD_QUEUE, CALLBACK_JID): f"cogworker:queue:{ODD_QUEUE}:batch_callback:{CALLBACK_JID}",
}
#: A process that died with jobs in progress, and its in-progress list as that release
#: named it: one list for every queue.
GONE = "host:1:gone"
OLD_IN_PROGRESS = "cogworker:inprogress:" + GONE
NOW = 1_800_000_000.0
#: The UTC day of NOW, and the counters that release kept for all queues at once: in total,
#: and for that day (with a TTL), by name.
DAY = "2027-01-15"
OLD_TOTALS = {"processed": 1234, "failed": 56, "cancelled": 3, "expired": 2}
OLD_DAYS = {"processed": 34, "failed": 5}
OLD_COUNTERS = {
    **{f"cogworker:stat:{name}": count for name, count in OLD_TOTALS.items()},
    **{f"cogworker:stat:{name}:{DAY}": count for name, count in OLD_DAYS.items()},
}
#: A class's run history as that release kept it, for all queues at once: its runs on two
#: queues, newest first, with a TTL.
RUN_CLASS = "tests.app.jobs.Record"
OLD_CLASS_HISTORY = "cogworker:class_history:" + RUN_CLASS
OLD_RUNS = [
    RunRecord(jid=f"ran-{n}", class_name=RUN_CLASS, queue=queue, started_at=NOW - 60 * n - 1,
              ended_at=NOW - 60 * n, outcome="success", process=GONE)
    for n, queue in enumerate(["default", "heavy", "default"])
]  # fmt: skip

#: A job's own records as that release named them, by jid alone: this code's kind of record
#: (in its queue's slot) -> that release's.  Besides those its client and settlements wrote
#: (a tracked job's status, failed jobs' attempts), a finished job's status and run, and a
#: job's orphanings and hand-backs counters, written by hand.
RECORD_KINDS = {"status": "status", "attempts": "job_attempts", "history": "history",
                "orphanings": "orphanings", "handbacks": "handbacks"}  # fmt: skip
DONE_RUN = RunRecord(jid="j-done", class_name=RUN_CLASS, queue="default", started_at=NOW - 2,
                     ended_at=NOW - 1, outcome="success", process=GONE)  # fmt: skip
ATTEMPT_OUTCOMES = {"retry": "retrying", "dead": "dead"}
DONE_ATTEMPT = AttemptRecord(attempt=1, failed_at=NOW - 5, error_class="ValueError",
                             error_message="boom", outcome="retrying")  # fmt: skip

#: Where that release kept locks: a unique lock (or a caller's jid's), a periodic running lock.
OLD_UNIQUE = "cogworker:unique:"
OLD_RUNNING = "cogworker:periodic:running:"
#: The jobs waiting in the data set that hold a lock, each under its old name and the name
#: layout step 6 gives it (the queue of all of them is "default").
UNIQUE_ARGS = {"queued": "locked and tracked", "scheduled": "scheduled and locked"}
HELD = {
    **{f"j-{where}": "jid:j-" + where for where in ("retry", "handed", "orphan", "handback")},
    **{
        f"tracked-{where}": unique.lock_name(TrackedUnique.class_path(), "default", [args])
        for where, args in UNIQUE_ARGS.items()
    },
}
HELD_LOCKS = {jid: (OLD_UNIQUE + name, keys.unique_lock("default", name))
              for jid, name in HELD.items()}  # fmt: skip
HELD_LOCKS["j-periodic"] = (
    OLD_RUNNING + hourly.name,
    keys.periodic_running("default", hourly.name),
)
#: A lock no waiting job names (its job is gone): left under its old name, to expire.
LEFTOVER_LOCK = OLD_UNIQUE + "jid:long-gone"
#: A batch whose success callback names the lock of its fixed jid (held by none).
OLD_BATCH = "cogworker:{b:b1}:batch"
#: A periodic entry whose class's options name its runs' unique lock; its cron never due.
UNIQUE_ENTRY = "unique-yearly"

#: The scheduled, retry and dead sets as that release kept them, for all queues at once.
OLD_SETS = {name: f"cogworker:{name}" for name in ("schedule", "retry", "dead")}
#: Entries of those sets written by hand, besides the client's and settlements': jobs of
#: several queues sharing a score (within a queue and across queues), an entry that isn't
#: JSON and one naming no queue (both to the part of the empty queue name), by set.
TIED = NOW + 100


def set_entry(jid: str, queue: str) -> bytes:
    return json.dumps({"class": "tests.app.jobs.Record", "args": [jid], "jid": jid,
                       "queue": queue, "retry": True}).encode()  # fmt: skip


HAND_SET_ENTRIES: dict[str, dict[bytes, float]] = {
    "schedule": {
        set_entry("s-heavy-1", "heavy"): TIED,
        set_entry("s-heavy-2", "heavy"): TIED,
        set_entry("s-default", "default"): TIED,
        set_entry("s-odd", ODD_QUEUE): TIED,
    },
    "retry": {set_entry("r-heavy", "heavy"): NOW + 30},
    "dead": {
        b"\xff\xfe not json": NOW - 10,
        json.dumps({"jid": "no-queue", "class": "x.Y"}).encode(): NOW - 10,
        set_entry("d-heavy", "heavy"): NOW - 20,
    },
}

#: The lists of jobs left for a reconciler as that release kept them, for all queues at
#: once: hand-overs, parked repeat orphans and repeat hand-backs.
OLD_LISTS = {name: f"cogworker:{name}" for name in keys.LEFT_LIST_NAMES}


def _handed(jid: str, queue: str) -> bytes:
    return handover_record(OutcomeRecord(kind="ack", jid=jid, queue=queue)).encode()


#: Entries of those lists written by hand, behind the lock-naming ones (`_write_old_locks`),
#: in their order: entries of several queues interleaved (each queue's order must hold), an
#: entry twice (moved twice, not once), one that isn't JSON and one naming no queue (both to
#: the part of the empty queue name).
HAND_LIST_ENTRIES: dict[str, list[bytes]] = {
    "unsettled": [
        _handed("u-heavy-1", "heavy"), _handed("u-default", "default"),
        _handed("u-heavy-2", "heavy"), b"{damaged",
    ],
    "repeat_orphans": [
        set_entry("o-heavy-1", "heavy"), set_entry("o-odd", ODD_QUEUE),
        set_entry("o-heavy-2", "heavy"), set_entry("o-heavy-1", "heavy"),
        json.dumps({"jid": "o-no-queue", "class": "x.Y"}).encode(),
    ],
    "repeat_handbacks": [b"\xff\xfe not json", set_entry("h-heavy", "heavy")],
}  # fmt: skip

#: Entries of the gone process's in-progress list written by hand, behind the lock-naming
#: one (`_write_old_locks`), newest first (as fetched onto its left end): jobs of several
#: queues interleaved (each queue's order must hold), one that isn't JSON and one naming
#: no queue (both to the empty queue name's list).
HAND_IN_PROGRESS: list[bytes] = [
    set_entry("ip-heavy-2", "heavy"), set_entry("ip-odd", ODD_QUEUE),
    set_entry("ip-default", "default"), b"\xff\xfe not json",
    set_entry("ip-heavy-1", "heavy"), json.dumps({"jid": "ip-no-queue"}).encode(),
]  # fmt: skip

#: A gone process's presence keys as that release named them (left to expire): its
#: heartbeat hash, its threads' work, a signal nobody read and its memory history.
OLD_PROCESS_KEYS = {
    f"cogworker:process:{GONE}": {"beat": "1700000000.000000", "concurrency": "5"},
    f"cogworker:workers:{GONE}": {"thread-1": '{"jid": "j-running"}'},
    f"cogworker:signal:{GONE}": ["quiet"],
    f"cogworker:memory:{GONE}": {"1699999200:51200": 1_699_999_200},
}

#: One key as a value: its type, its content, and whether it expires.
KeyValue = tuple[str, Any, bool]


def write_old_layout(rc: redis.Redis, redis_url: str) -> None:
    """Queued (several queues), scheduled, retrying, dead, unique and tracked jobs, counters
    in total and per day, a class's run history, jobs' own records (statuses, attempts,
    runs, orphanings and hand-backs), batch callback markers, a dead process's job in
    progress and presence keys, hand-overs and parked jobs (several queues), and the
    periodic state under its layout-0 names."""
    client = cogworker.Client(cogworker.Config(redis_url=redis_url))
    try:
        client.enqueue(Record, "queued")
        client.enqueue(RecordHeavy, "on another queue")
        client.enqueue_in(3600, Record, "later")
        client.enqueue(TrackedUnique, UNIQUE_ARGS["queued"], jid="tracked-queued")
        client.enqueue_in(3600, TrackedUnique, UNIQUE_ARGS["scheduled"], jid="tracked-scheduled")
    finally:
        client.close()
    _settle(rc, "retry", "j-retry")
    _settle(rc, "dead", "j-dead")
    _write_old_sets(rc)
    _write_old_locks(rc)
    # That release counted the settlements above in its global counters, written below.
    rc.delete(*rc.scan_iter(match="cogworker:{q:*}:stat:*"))
    for key, count in OLD_COUNTERS.items():
        rc.set(key, count, ex=3600 if key.endswith(DAY) else None)
    rc.rpush(OLD_CLASS_HISTORY, *map(to_json, OLD_RUNS))
    rc.expire(OLD_CLASS_HISTORY, 86_400)
    rc.lpush(OLD_IN_PROGRESS, _payload("j-running"))
    _write_old_records(rc)
    _write_process_keys(rc)
    for name, jobs in HAND_QUEUES.items():
        rc.rpush(keys.queue(name), *jobs)
    # This code's client pushed onto the new names: each list goes where the old one pushed.
    for key in list(rc.scan_iter(match=keys.queue("*"))):
        rc.rename(key, OLD_QUEUE.format(keys.queue_of(key.decode())))
    for old_marker in OLD_MARKERS.values():
        rc.set(old_marker, "1", ex=30 * 86_400)
    # The release before step 1 wrote no layout number.
    rc.delete(keys.LAYOUT)
    rc.hset(OLD_SCHEDULE, hourly.name, encode_entry(scheduled_entry(hourly, merging, NOW)))
    rc.hset(OLD_SCHEDULE, "damaged", "{not json")
    rc.set(OLD_EPOCH, "epoch-token")
    rc.set(OLD_RUNNING + hourly.name, "j-periodic", px=600_000)
    unique_entry = attrs.evolve(
        scheduled_entry(hourly, merging, NOW), name=UNIQUE_ENTRY, cron="0 0 1 1 *",
        options={"unique": "until_executed", "unique_lock": OLD_UNIQUE + "yearly"},
    )  # fmt: skip
    rc.hset(OLD_SCHEDULE, UNIQUE_ENTRY, encode_entry(unique_entry))


def _write_old_records(rc: redis.Redis) -> None:
    """The jobs' own records under the names that release gave them, and no jid index
    entry for them (it wrote those for kept results only)."""
    rc.hset("cogworker:status:j-done", mapping={"status": "complete", "update_time": NOW})
    rc.expire("cogworker:status:j-done", 1800)
    rc.lpush("cogworker:history:j-done", to_json(DONE_RUN))
    rc.lpush("cogworker:job_attempts:j-done", to_json(DONE_ATTEMPT))
    rc.set("cogworker:orphanings:j-running", 1, ex=86_400)
    rc.set("cogworker:handbacks:j-running", 2, ex=86_400)
    # This code wrote the records of the jobs pushed and settled above in their queue's slot.
    for kind, old_kind in RECORD_KINDS.items():
        for key in list(rc.scan_iter(match=f"cogworker:{{q:*}}:{kind}:*")):
            jid = key.decode().rpartition(f"}}:{kind}:")[2]
            rc.rename(key, f"cogworker:{old_kind}:{jid}")
    for index in list(rc.scan_iter(match=keys.jid_index("*"))):
        if (rc.get(index) or b"").startswith(RECORDS_ONLY.encode()):
            rc.delete(index)


def _write_old_locks(rc: redis.Redis) -> None:
    """The locks the old release took, and the records naming them: in every place a job
    waits.  The client above took its unique jobs' locks under this code's names: they and
    their payloads go back to the old ones."""
    for jid, (old, new) in HELD_LOCKS.items():
        if rc.exists(new):
            rc.rename(new, old)
        else:
            rc.set(old, jid, px=3_600_000)
    rc.set(LEFTOVER_LOCK, "long-gone", px=3_600_000)
    for key in (keys.queue("default"), OLD_SETS["schedule"]):
        _old_names_in(rc, key)
    rc.lpush(OLD_IN_PROGRESS, _payload("j-periodic", running_lock=HELD_LOCKS["j-periodic"][0]))
    rc.rpush(OLD_IN_PROGRESS, *HAND_IN_PROGRESS)
    handed = OutcomeRecord(kind="ack", jid="j-handed", class_name="tests.app.jobs.Record",
                           unique_lock=_old_lock("j-handed"), unique_action="release",
                           queue="default")  # fmt: skip
    rc.rpush(OLD_LISTS["unsettled"], handover_record(handed))
    rc.rpush(OLD_LISTS["repeat_orphans"], _payload("j-orphan", unique_lock=_old_lock("j-orphan")))
    rc.rpush(
        OLD_LISTS["repeat_handbacks"], _payload("j-handback", unique_lock=_old_lock("j-handback"))
    )
    for name, entries in HAND_LIST_ENTRIES.items():
        rc.rpush(OLD_LISTS[name], *entries)
    callback = _payload("b1-success", unique_lock=OLD_UNIQUE + "jid:b1-success")
    rc.hset(OLD_BATCH, mapping={"created_at": NOW, "cb:success": callback})
    rc.expire(OLD_BATCH, 30 * 86_400)


def _write_old_sets(rc: redis.Redis) -> None:
    """Each set's entries in its global old name: those this code's client and settlements
    wrote in their queues' sets, and `HAND_SET_ENTRIES`."""
    for name, old in OLD_SETS.items():
        for key in list(rc.scan_iter(match=f"cogworker:{{q:*}}:{name}")):
            rc.zadd(old, dict(rc.zrange(key, 0, -1, withscores=True)))
            rc.delete(key)
        rc.zadd(old, HAND_SET_ENTRIES[name])


def _old_lock(jid: str) -> str:
    return HELD_LOCKS[jid][0]


def _old_names_in(rc: redis.Redis, key: str) -> None:
    """The payloads of `key` (a list or a sorted set) naming their locks by their old names."""
    if rc.type(key) == b"list":
        for index, entry in enumerate(rc.lrange(key, 0, -1)):
            if (old := _named_old(entry)) is not None:
                rc.lset(key, index, old)
    else:
        for member, score in rc.zrange(key, 0, -1, withscores=True):
            if (old := _named_old(member)) is not None:
                rc.zrem(key, member)
                rc.zadd(key, {old: score})


def _named_old(entry: bytes) -> bytes | None:
    """`entry` naming its unique lock by the old name; None if it names none of `HELD`'s."""
    olds = {new: old for old, new in HELD_LOCKS.values()}
    record = json.loads(entry)
    if record.get("unique_lock") not in olds:
        return None
    return json.dumps({**record, "unique_lock": olds[record["unique_lock"]]}).encode()


def _write_process_keys(rc: redis.Redis) -> None:
    """`OLD_PROCESS_KEYS`, each of its type, expiring."""
    pipe = rc.pipeline()
    for name, content in OLD_PROCESS_KEYS.items():
        if isinstance(content, list):
            pipe.rpush(name, *content)
        elif name.startswith("cogworker:memory:"):
            pipe.zadd(name, content)
        else:
            pipe.hset(name, mapping=content)
        pipe.expire(name, 3600)
    pipe.execute()


def _payload(jid: str, **locks: str) -> str:
    unique_mode = {"unique": "until_executed"} if "unique_lock" in locks else {}
    return json.dumps({"class": "tests.app.jobs.Record", "args": [jid], "jid": jid,
                       "queue": "default", "retry": True, **unique_mode, **locks})  # fmt: skip


def _settle(rc: redis.Redis, kind: OutcomeKind, jid: str) -> None:
    """A fetched job settled as a retry or a dead job, with its counters and attempts; a
    retrying one holds a caller's jid lock, a dead one named its lock (released)."""
    locks = {"unique_lock": OLD_UNIQUE + "jid:" + jid}
    raw = _payload(jid, **locks)
    rc.lpush(keys.in_progress("default", GONE), raw)  # where this code settles it from
    attempt = attrs.evolve(DONE_ATTEMPT, outcome=ATTEMPT_OUTCOMES[kind])
    outcome = OutcomeRecord(
        kind=kind, jid=jid, class_name="tests.app.jobs.Record",
        score=NOW, payload=raw, attempt=to_json(attempt),
    )  # fmt: skip
    order = SettleOrder(fetched=Fetched(queue="default", raw=raw.encode()), outcome=outcome)
    SettleStore(rc).settle(GONE, order, NOW)


def contents(rc: redis.Redis) -> dict[str, KeyValue]:
    """Every key of the Redis: its type, its content, whether it expires."""
    return {key.decode(): _value(rc, key) for key in rc.scan_iter(count=1000)}


def _value(rc: redis.Redis, key: bytes) -> KeyValue:
    kind = rc.type(key).decode()
    read = {
        "string": rc.get,
        "hash": rc.hgetall,
        "list": lambda name: rc.lrange(name, 0, -1),
        "set": lambda name: sorted(rc.smembers(name)),
        "zset": lambda name: rc.zrange(name, 0, -1, withscores=True),
    }
    return kind, read[kind](key), rc.pttl(key) > 0


def renamed(before: dict[str, KeyValue], moves: dict[str, str]) -> dict[str, KeyValue]:
    """`before` with each key of `moves` under its new name."""
    return {moves.get(key, key): value for key, value in before.items()}
