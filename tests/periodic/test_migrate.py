"""`cogworker migrate` on a Redis the release before layout step 1 wrote: every key moved or
left as it was, nothing lost, again and after a crash at any point; the counters read the
same totals, a class the same runs and a job the same records; workers refuse that Redis
until then."""

from __future__ import annotations

import json
from collections.abc import Iterable

import attrs
import pytest
import redis

import cogworker
from cogworker import LayoutError, tracking
from cogworker.adapters import located, parts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_store import DashboardStore
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.layout_store import LayoutStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.web.locate import search
from cogworker.domain import layout
from cogworker.domain.layout_splits import queue_named
from cogworker.domain.records import to_json
from tests.app.cli_runner import Cli
from tests.app.helpers import CLIENT_KINDS, enqueue_with
from tests.app.jobs import Record
from tests.periodic.conftest import StartWorker
from tests.periodic.migration_steps import (
    cut_short,
    indexed_entries,
    relocked,
    rewrite_rows,
    split_entries,
    split_rows,
)
from tests.periodic.old_layout import (
    DAY,
    DONE_ATTEMPT,
    DONE_RUN,
    GONE,
    HAND_QUEUES,
    HAND_SET_ENTRIES,
    NOW,
    ODD_QUEUE,
    OLD_CLASS_HISTORY,
    OLD_COUNTERS,
    OLD_DAYS,
    OLD_EPOCH,
    OLD_IN_PROGRESS,
    OLD_LISTS,
    OLD_MARKERS,
    OLD_PROCESS_KEYS,
    OLD_QUEUE,
    OLD_RUNS,
    OLD_SCHEDULE,
    OLD_SETS,
    OLD_TOTALS,
    RECORD_KINDS,
    RUN_CLASS,
    TIED,
    KeyValue,
    contents,
    renamed,
    set_entry,
    write_old_layout,
)
from tests.support.processes import wait_until

#: Where step 1 moves each key.
MOVES = {OLD_SCHEDULE: keys.PERIODIC_SCHEDULE, OLD_EPOCH: keys.PERIODIC_EPOCH}
#: The queues of the data set: those its client pushed to, and those written by hand.
QUEUES = ("default", "heavy", *HAND_QUEUES)
#: Where step 2 moves each queue's list and each batch callback marker.
QUEUE_MOVES = {OLD_QUEUE.format(name): keys.queue(name) for name in QUEUES} | {
    old: keys.batch_callback_mark(queue, jid) for (queue, jid), old in OLD_MARKERS.items()
}
#: Where step 3 moves each counter: the part of the empty queue name, which reads add in.
COUNTER_MOVES = {
    old: "cogworker:{q:}:stat:" + old.removeprefix("cogworker:stat:") for old in OLD_COUNTERS
}
#: Where step 4 moves a class's run history: the part of the empty queue name, which reads
#: merge in.
HISTORY_MOVES = {OLD_CLASS_HISTORY: "cogworker:{q:}:class_history:" + RUN_CLASS}


def _record_moves(names: Iterable[str]) -> dict[str, str]:
    """Where step 5 moves each job's own record among `names`: the part of the empty queue
    name (an old name doesn't say the job's queue), which reads by jid look in too."""
    moves = {}
    for kind, old_kind in RECORD_KINDS.items():
        prefix = f"cogworker:{old_kind}:"
        moves |= {
            name: f"cogworker:{{q:}}:{kind}:{name.removeprefix(prefix)}"
            for name in names
            if name.startswith(prefix)
        }
    return moves


#: Where step 7 moves a process's presence keys: under its own hash tag.
PROCESS_MOVES = dict(
    zip(OLD_PROCESS_KEYS, [keys.process(GONE), keys.workers(GONE), keys.signal(GONE),
                           keys.memory_history(GONE)], strict=True)
)  # fmt: skip
MIGRATED: KeyValue = ("string", str(layout.current()).encode(), False)


@pytest.fixture
def old(rc: redis.Redis, redis_url: str) -> dict[str, KeyValue]:
    """The test's Redis holding the old layout's data set; every key of it."""
    write_old_layout(rc, redis_url)
    return contents(rc)


def _migrated(before: dict[str, KeyValue]) -> dict[str, KeyValue]:
    """`before` as a migration must leave it: the keys moved, the number written."""
    moves = MOVES | QUEUE_MOVES | COUNTER_MOVES | HISTORY_MOVES | _record_moves(before)
    moves |= PROCESS_MOVES
    return {**indexed_entries(split_entries(relocked(renamed(before, moves)))),
            keys.LAYOUT: MIGRATED}  # fmt: skip


def _read_as_before(rc: redis.Redis) -> None:
    """The processed and failed counters read, in total and per day, the class's runs and
    the jobs' own records read what the old release read from its global keys."""
    assert tracking.totals(rc) == {"processed": OLD_TOTALS["processed"],
                                   "failed": OLD_TOTALS["failed"]}  # fmt: skip
    for name, count in OLD_DAYS.items():
        assert tracking.daily_counts(rc, name, NOW, 1) == {DAY: count}
    assert tracking.class_history(rc, RUN_CLASS) == OLD_RUNS
    assert tracking.status(rc, "j-done") == "complete"
    assert tracking.history(rc, "j-done") == [DONE_RUN]
    assert tracking.attempts(rc, "j-done") == [DONE_ATTEMPT]
    assert [attempt.outcome for attempt in tracking.attempts(rc, "j-dead")] == ["dead"]


def test_step_one_moves_the_keys_the_old_release_wrote_to_where_the_code_reads_them() -> None:
    """The step's renames are the names above: from the old release's, to this code's."""
    assert {rename.old: rename.new for rename in layout.STEPS[0].renames} == MOVES


def test_the_data_set_holds_what_step_two_moves(old: dict[str, KeyValue]) -> None:
    """Every queue's list under its old name (the odd one's jobs in their order), a marker
    in each form the old release named one, and none of the names step 2 moves to."""
    assert {name for name in QUEUE_MOVES if old[name][0] != "none"} == set(QUEUE_MOVES)
    assert old[OLD_QUEUE.format(ODD_QUEUE)] == ("list", HAND_QUEUES[ODD_QUEUE], False)
    assert not set(QUEUE_MOVES.values()) & set(old)


def test_the_counters_step_moves_each_counter_to_the_part_reads_add_in() -> None:
    """Every counter of the old release, total or day, goes to the migrated part's counter
    of the same name (and day), merged by adding."""
    (family,) = layout.STEPS[2].families
    assert {old: family.rename(old).new for old in OLD_COUNTERS} == COUNTER_MOVES
    assert family.merge == "add"
    assert COUNTER_MOVES[f"cogworker:stat:failed:{DAY}"] == keys.stat(parts.MIGRATED, "failed", DAY)


def test_the_class_history_step_moves_each_class_to_the_part_reads_merge_in() -> None:
    """A class's run history of the old release goes whole to the migrated part's history
    of that class (its queues can't be told apart), merged by keeping both lists' runs."""
    (family,) = layout.STEPS[3].families
    assert {old: family.rename(old).new for old in HISTORY_MOVES} == HISTORY_MOVES
    assert family.merge == "keep"
    assert HISTORY_MOVES[OLD_CLASS_HISTORY] == keys.class_history(parts.MIGRATED, RUN_CLASS)


def test_the_data_set_holds_every_kind_of_a_job_s_own_records(old: dict[str, KeyValue]) -> None:
    """Each kind under its old name (the statuses of the tracked jobs, queued and scheduled,
    and of a finished one), none under a queue's slot, and no jid index entry for them."""
    moves = _record_moves(old)
    assert {old_name.split(":")[1] for old_name in moves} == set(RECORD_KINDS.values())
    assert sum(name.startswith("cogworker:status:") for name in moves) == 3
    assert not [name for name in old if name.startswith((keys.JID_INDEX_PREFIX, "cogworker:{q:}"))]


def test_the_records_step_moves_each_job_s_records_to_the_part_reads_look_in() -> None:
    """Each kind of record goes whole to the migrated part's record of the same jid."""
    step = layout.STEPS[4]
    names = ["cogworker:status:j1", "cogworker:job_attempts:j:2", "cogworker:history:j3",
             "cogworker:orphanings:j4", "cogworker:handbacks:j5"]  # fmt: skip
    moves = {name: family.rename(name).new for family in step.families for name in names
             if family.matches(name)}  # fmt: skip
    assert moves == _record_moves(names)
    assert moves["cogworker:job_attempts:j:2"] == keys.job_attempts(parts.MIGRATED, "j:2")
    assert not any(f.matches("cogworker:class_history:C") for f in step.families)


def test_a_migrated_job_s_records_read_behind_those_it_writes_after(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """A job whose attempts were migrated fails again: its new attempt, in its queue's slot
    and found by its jid index, reads first, then the migrated ones."""
    assert cli.run("migrate").status == 0
    again = attrs.evolve(DONE_ATTEMPT, attempt=2, failed_at=NOW)
    raw = b'{"jid": "j-done"}'
    rc.lpush(keys.in_progress("default", "host:1:now"), raw)
    outcome = OutcomeRecord(kind="retry", jid="j-done", score=NOW + 60, payload="{}",
                            attempt=to_json(again))  # fmt: skip
    order = SettleOrder(fetched=Fetched(queue="default", raw=raw), outcome=outcome)
    assert SettleStore(rc).settle("host:1:now", order, NOW)

    assert tracking.attempts(rc, "j-done") == [again, DONE_ATTEMPT]
    assert rc.llen(keys.job_attempts("default", "j-done")) == 1


def test_the_process_step_moves_each_presence_key_under_its_process_tag(
    old: dict[str, KeyValue],
) -> None:
    """A process's heartbeat, threads, signals and memory go to its own slot, each family
    moving keys of its own type only."""
    families = layout.STEPS[6].families
    assert {name: f.rename(name).new for name in OLD_PROCESS_KEYS for f in families
            if f.matches(name)} == PROCESS_MOVES  # fmt: skip
    assert {f.kind for f in families} == {old[name][0] for name in OLD_PROCESS_KEYS}


def test_migrate_moves_the_old_layout_with_nothing_lost(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """Every key is where it was or under its new name, with the same content and expiry;
    the answer lists the keys it renamed."""
    answer = cli.run("migrate")

    assert answer.status == 0, answer
    assert contents(rc) == _migrated(old)
    _read_as_before(rc)
    assert OLD_SCHEDULE in answer.stdout
    assert "renamed" in answer.stdout
    assert answer.lines[-1] == f"layout 0 -> {layout.current()}"


def test_the_sets_step_moves_each_entry_to_its_queue_s_set_with_its_score(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """Each scheduled, retry and dead entry lands in the set of the queue it names, ties
    and all; one that isn't JSON or names no queue in the empty queue name's, which merged
    reads go over; the dashboard counts as many entries of each as the old sets held."""
    assert cli.run("migrate").status == 0

    heavy = dict(rc.zrange(keys.schedule("heavy"), 0, -1, withscores=True))
    assert heavy == {m: TIED for m in HAND_SET_ENTRIES["schedule"] if b"s-heavy" in m}
    assert _scores(rc, keys.schedule(ODD_QUEUE), "s-odd") == [TIED]
    assert _scores(rc, keys.schedule("default"), "s-default") == [TIED]
    assert _scores(rc, keys.retry("default"), "j-retry") == [NOW]
    unreadable = {m for m in HAND_SET_ENTRIES["dead"] if b"heavy" not in m}
    assert set(rc.zrange(keys.dead(parts.MIGRATED), 0, -1)) == unreadable
    assert {b"default", b"heavy", ODD_QUEUE.encode()} <= rc.smembers(keys.PARTS)
    counts = DashboardStore.on(rc, Retention()).counts()
    assert (counts.scheduled, counts.retries, counts.dead) == tuple(
        len(old[OLD_SETS[name]][1]) for name in ("schedule", "retry", "dead")
    )
    assert not rc.exists(*OLD_SETS.values())


def test_the_index_step_notes_each_set_entry_so_go_to_jid_finds_it_without_a_scan(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """Each migrated entry naming a jid is in its queue's jid index of the sets, with its
    set and score (entries sharing a score too), and the dashboard finds a plain one by its
    jid through it."""
    assert cli.run("migrate").status == 0

    assert rc.hget(keys.located("default"), "j-retry") == located.value("retry", NOW).encode()
    heavy = rc.hgetall(keys.located("heavy"))
    assert {heavy[jid] for jid in heavy if jid.startswith(b"s-heavy")} == {
        located.value("schedule", TIED).encode()
    }
    store = DashboardStore.on(rc, Retention())
    assert [(at.queue, at.name) for at in store.sets.located("j-retry")] == [("default", "retry")]
    found = search(store, "j-retry")
    assert found.place is not None
    assert found.place.tag == "Retrying"


def test_the_lists_step_moves_each_entry_to_its_queue_s_list_in_order(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """Each hand-over and parked entry lands at the end of its queue's list, each queue's
    in their order, one held twice twice; one that isn't JSON or names no queue on the
    empty queue name's list, which a reconciler reads; the old lists are gone."""
    assert cli.run("migrate").status == 0

    for name, old_list in OLD_LISTS.items():
        entries = old[old_list][1]
        for queue in ("heavy", ODD_QUEUE):
            mine = [entry for entry in entries if queue_named(entry) == queue]
            assert rc.lrange(keys.left_list(name, queue), 0, -1) == mine
        queues = parts.queues(rc.smembers(keys.PARTS))  # the migrated part with them
        assert sum(rc.llen(keys.left_list(name, queue)) for queue in queues) == len(entries)
    assert rc.lrange(keys.repeat_orphans("heavy"), 0, -1) == [
        set_entry(jid, "heavy") for jid in ("o-heavy-1", "o-heavy-2", "o-heavy-1")
    ]
    assert rc.lrange(keys.unsettled(parts.MIGRATED), 0, -1) == [b"{damaged"]
    assert len(rc.lrange(keys.repeat_orphans(parts.MIGRATED), 0, -1)) == 1
    assert not rc.exists(*OLD_LISTS.values())


def test_the_in_progress_step_splits_a_gone_process_s_list_by_queue_in_order(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """Each entry of a process's old in-progress list lands on that process's list of the
    queue it names, each queue's in their order, one not JSON or naming no queue on the
    empty queue name's; its set names those queues; the old list is gone.  Its recovery
    then puts each queue's jobs back on that queue, oldest at the front, and parks the
    unreadable ones for dead."""
    entries = old[OLD_IN_PROGRESS][1]
    assert cli.run("migrate").status == 0

    for queue in ("default", "heavy", ODD_QUEUE, parts.MIGRATED):
        mine = [_jid(entry) for entry in entries if queue_named(entry) == queue]
        assert [_jid(entry) for entry in rc.lrange(keys.in_progress(queue, GONE), 0, -1)] == mine
    named = {b"default", b"heavy", ODD_QUEUE.encode(), b""}
    assert rc.smembers(keys.process_queues(GONE)) == named
    assert not rc.exists(OLD_IN_PROGRESS)

    recovered = RecoverStore(rc).recover_all(GONE, max_orphanings=10, forget=True)

    assert recovered == (len(entries) - 2, 2)
    heavy = [set_entry(jid, "heavy") for jid in ("ip-heavy-2", "ip-heavy-1")]
    assert rc.lrange(keys.queue("heavy"), -2, -1) == heavy  # the oldest taken at the front
    parked = rc.lrange(keys.repeat_orphans(parts.MIGRATED), -2, -1)  # behind step 9's
    assert parked == [entry for entry in entries if queue_named(entry) == parts.MIGRATED]
    assert not rc.exists(keys.process_queues(GONE))


def test_an_entry_left_on_an_old_list_after_the_migration_is_moved_by_a_run_again(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """An old release hands a settlement over on the global list after the migration: a
    run again moves it behind those of its queue, and the old list is gone again."""
    assert cli.run("migrate").status == 0
    migrated = rc.lrange(keys.unsettled("heavy"), 0, -1)
    late = [set_entry("late-1", "heavy"), set_entry("late-2", "heavy")]
    rc.rpush(OLD_LISTS["unsettled"], *late)

    again = cli.run("migrate")

    assert again.status == 0, again
    assert "moved 2" in again.stdout
    assert rc.lrange(keys.unsettled("heavy"), 0, -1) == [*migrated, *late]
    assert not rc.exists(OLD_LISTS["unsettled"])


def _jid(entry: bytes) -> str | bytes:
    """An entry's jid (step 6 rewrote the lock a record names), or the entry not JSON."""
    try:
        return str(json.loads(entry)["jid"])
    except ValueError:
        return entry


def _scores(rc: redis.Redis, key: str, jid: str) -> list[float]:
    """The scores of the entries of `key` whose jid is `jid` (step 6 rewrote the lock a
    retrying job's record names: found by its jid, not its bytes)."""
    return [score for member, score in rc.zrange(key, 0, -1, withscores=True)
            if json.loads(member)["jid"] == jid]  # fmt: skip


def test_an_entry_filed_in_an_old_set_after_the_migration_is_moved_by_a_run_again(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """An old release files a retry in the global set after the migration: a run again moves
    it to its queue's set, with its score, and the old set is gone again."""
    assert cli.run("migrate").status == 0
    late = json.dumps({"class": "tests.app.jobs.Record", "args": [], "jid": "late-retry",
                       "queue": "late", "retry": True})  # fmt: skip
    rc.zadd(OLD_SETS["retry"], {late: NOW + 5})

    again = cli.run("migrate")

    assert again.status == 0, again
    assert "moved 1" in again.stdout
    assert rc.zrange(keys.retry("late"), 0, -1, withscores=True) == [(late.encode(), NOW + 5)]
    assert rc.hgetall(keys.located("late")) == {
        b"late-retry": located.value("retry", NOW + 5).encode()
    }
    assert rc.sismember(keys.PARTS, "late")
    assert not rc.exists(OLD_SETS["retry"])


def test_migrate_again_moves_nothing(old: dict[str, KeyValue], rc: redis.Redis, cli: Cli) -> None:
    """A second run finds the layout up to date and changes nothing."""
    cli.run("migrate")
    answer = cli.run("migrate")

    assert answer.status == 0, answer
    assert answer.lines == [f"layout {layout.current()}: up to date, nothing to move"]
    assert contents(rc) == _migrated(old)


def test_a_migration_cut_short_anywhere_is_finished_by_running_it_again(
    old: dict[str, KeyValue], rc: redis.Redis, redis_url: str, cli: Cli
) -> None:
    """A run that died after any number of its writes (its data set written afresh each
    time), before or after a step was noted: the number stays below this code's until the
    last, and the next run finishes the move."""
    store = LayoutStore(rc)
    done, writes = 0, cut_short(store, None)
    while done <= writes:
        rc.flushall()
        write_old_layout(rc, redis_url)
        before = contents(rc)
        assert cut_short(store, done) == done

        assert (store.stored() or 0) < layout.current() or done == writes
        assert cli.run("migrate").status == 0
        assert contents(rc) == _migrated(before), f"cut short after {done} of {writes} writes"
        _read_as_before(rc)
        done += 1


def test_a_straggler_list_written_after_the_migration_waits_behind_the_migrated_jobs(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """An old release pushes onto a queue's old list after the migration: a run again moves
    its jobs onto the queue's list, in their order, behind those already waiting there."""
    cli.run("migrate")
    migrated = rc.lrange(keys.queue(ODD_QUEUE), 0, -1)
    rc.lpush(OLD_QUEUE.format(ODD_QUEUE), b"late-1", b"late-2")

    assert cli.run("migrate").status == 0

    assert rc.lrange(keys.queue(ODD_QUEUE), 0, -1) == [b"late-2", b"late-1", *migrated]
    assert migrated == HAND_QUEUES[ODD_QUEUE]
    assert not rc.exists(OLD_QUEUE.format(ODD_QUEUE))


def test_an_old_key_written_again_after_the_migration_is_merged_not_overwritten(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """A straggler of the old release writes its schedule again: a run after keeps each
    migrated entry and adds only the names it lacks."""
    cli.run("migrate")
    rc.hset(OLD_SCHEDULE, mapping={"hourly": "stale", "added-later": "{}"})

    assert cli.run("migrate").status == 0

    schedule = rc.hgetall(keys.PERIODIC_SCHEDULE)
    assert schedule[b"hourly"] == old[OLD_SCHEDULE][1][b"hourly"]
    assert schedule[b"added-later"] == b"{}"
    assert not rc.exists(OLD_SCHEDULE)


def test_a_counter_counted_again_after_the_migration_is_added_not_dropped(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """A straggler of the old release counts 5 runs (2 of them failed) in its global
    counters: a run after adds them to the migrated ones, in total and for the day."""
    cli.run("migrate")
    for name, runs in (("processed", 5), ("failed", 2)):
        rc.incrby(f"cogworker:stat:{name}", runs)
        rc.incrby(f"cogworker:stat:{name}:{DAY}", runs)

    assert cli.run("migrate").status == 0

    assert tracking.totals(rc) == {"processed": OLD_TOTALS["processed"] + 5,
                                   "failed": OLD_TOTALS["failed"] + 2}  # fmt: skip
    assert tracking.daily_counts(rc, "processed", NOW, 1) == {DAY: OLD_DAYS["processed"] + 5}
    assert not list(rc.scan_iter(match="cogworker:stat:*"))
    assert rc.ttl(keys.stat(parts.MIGRATED, "processed", DAY)) > 0


def test_a_straggler_run_kept_after_the_migration_is_merged_newest_first(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """An old release keeps a newer run in its class's global history after the migration:
    a run again moves it in front of the migrated runs, and reads give it first."""
    cli.run("migrate")
    late = attrs.evolve(OLD_RUNS[0], jid="ran-late", started_at=NOW, ended_at=NOW + 1)
    rc.lpush(OLD_CLASS_HISTORY, to_json(late))

    assert cli.run("migrate").status == 0

    assert tracking.class_history(rc, RUN_CLASS) == [late, *OLD_RUNS]
    assert rc.llen(keys.class_history(parts.MIGRATED, RUN_CLASS)) == len(OLD_RUNS) + 1
    assert not rc.exists(OLD_CLASS_HISTORY)


def test_a_dry_run_says_what_it_would_move_and_writes_nothing(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """Per old key: its type, its entries, its new name; then nothing has changed."""
    text = cli.run("migrate", "--dry-run")
    document = cli.json("migrate", "--dry-run")

    assert text.status == 0, text
    assert "would move" in text.stdout
    assert document["dry_run"] is True
    assert document["layout"] is None
    listed = {(entry["old"], entry["type"], entry["entries"], entry["new"])
              for entry in document["keys"] if entry["type"] != "none"}  # fmt: skip
    assert listed == {
        (OLD_SCHEDULE, "hash", len(old[OLD_SCHEDULE][1]), keys.PERIODIC_SCHEDULE),
        (OLD_EPOCH, "string", 1, keys.PERIODIC_EPOCH),
        *((old_name, *old[old_name][:1], _entries(old[old_name]), new)
          for old_name, new in QUEUE_MOVES.items()),
        *((old, "string", 1, new) for old, new in COUNTER_MOVES.items()),
        (OLD_CLASS_HISTORY, "list", len(OLD_RUNS), HISTORY_MOVES[OLD_CLASS_HISTORY]),
        *((old_name, old[old_name][0], _entries(old[old_name]), new)
          for old_name, new in _record_moves(old).items()),
        *rewrite_rows(old),
        *((old_name, *old[old_name][:1], _entries(old[old_name]), new)
          for old_name, new in PROCESS_MOVES.items()),
        *split_rows(old),
    }  # fmt: skip
    assert contents(rc) == old


def _entries(value: KeyValue) -> int:
    """A key's entries as a dry run counts them: a string 1, else how many it holds."""
    kind, content, _ = value
    return 1 if kind == "string" else len(content)


def test_migrate_waits_for_the_workers_to_stop(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """A process that beat within the orphan threshold: refused (exit 1), naming it, with
    nothing moved; once it is gone, the migration runs."""
    registry = ProcessRegistry(rc)
    registry.beat("host:2:running", {}, {}, 60, 0.0)

    refused = cli.run("migrate")

    assert refused.status == 1
    assert "stop the workers first" in refused.stderr
    assert "host:2:running" in refused.stderr
    assert not rc.exists(keys.PERIODIC_SCHEDULE)
    registry.remove("host:2:running")
    assert cli.run("migrate").status == 0


def test_migrate_waits_for_a_worker_of_the_older_release(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """A process of the release before step 7 beats under its older name: it counts as
    beating, and the migration waits for it too."""
    seconds, _ = rc.time()
    rc.sadd(keys.PROCESSES, "host:3:older")
    rc.hset(keys.LEGACY_PROCESS_PREFIX + "host:3:older", "beat", f"{seconds}.000000")

    refused = cli.run("migrate")

    assert refused.status == 1
    assert "host:3:older" in refused.stderr
    assert not rc.exists(keys.PERIODIC_SCHEDULE)


def test_a_worker_refuses_an_unmigrated_redis_and_starts_after_migrate(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli, start_worker: StartWorker
) -> None:
    """On the old layout a worker exits 2, naming the command, and writes nothing; after
    `cogworker migrate` it starts and keeps the migrated schedule's entries."""
    refused = start_worker("merging")

    assert refused.wait_for_exit(30) == 2
    assert "run `cogworker migrate`" in refused.log_text()
    assert contents(rc) == old

    assert cli.run("migrate").status == 0
    worker = start_worker("merging")
    wait_until(
        lambda: rc.smembers(keys.PROCESSES),
        message=lambda: f"the worker never registered; log:\n{worker.log_tail()}",
    )
    assert worker.is_running
    assert rc.hget(keys.PERIODIC_SCHEDULE, "damaged") == b"{not json"
    assert json.loads(rc.hget(keys.PERIODIC_SCHEDULE, "hourly") or b"")["name"] == "hourly"
    assert not rc.exists(OLD_SCHEDULE, OLD_EPOCH)


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_a_client_refuses_an_unmigrated_redis_and_enqueues_after_migrate(
    kind: str, old: dict[str, KeyValue], rc: redis.Redis, redis_url: str, cli: Cli
) -> None:
    """An enqueue on the old layout raises LayoutError naming the command, and pushes
    nothing; after `cogworker migrate` the same enqueue goes through."""
    config = cogworker.Config(redis_url=redis_url)

    with pytest.raises(LayoutError, match="run `cogworker migrate`"):
        enqueue_with(kind, config, Record, "refused", jid="j-refused")
    assert contents(rc) == old

    assert cli.run("migrate").status == 0
    assert enqueue_with(kind, config, Record, "accepted", jid="j-accepted") == "j-accepted"


def test_a_worker_gives_a_fresh_redis_its_layout_number(
    rc: redis.Redis, start_worker: StartWorker
) -> None:
    """No data of an older layout: the worker writes its number and starts; no migration."""
    worker = start_worker("merging")

    wait_until(
        lambda: rc.smembers(keys.PROCESSES),
        message=lambda: f"the worker never registered; log:\n{worker.log_tail()}",
    )
    assert rc.get(keys.LAYOUT) == MIGRATED[1]


def test_a_newer_layout_is_refused_by_migrate_and_workers(
    rc: redis.Redis, cli: Cli, start_worker: StartWorker
) -> None:
    """A Redis a newer release migrated: this release's worker and migrate both refuse it."""
    rc.set(keys.LAYOUT, layout.current() + 1)

    refused = cli.run("migrate")
    worker = start_worker("merging")

    assert refused.status == 1
    assert "upgrade cogworker" in refused.stderr
    assert worker.wait_for_exit(30) == 2
    assert "upgrade cogworker" in worker.log_text()
