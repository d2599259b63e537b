"""`cogworker migrate` on a Redis the release before layout step 1 wrote: every key moved or
left as it was, nothing lost, again and after a crash; the counters read the same totals;
workers refuse that Redis until then."""

from __future__ import annotations

import json

import pytest
import redis

import cogworker
from cogworker import LayoutError, tracking
from cogworker.adapters import counters
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_store import LayoutStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.domain import layout
from tests.app.cli_runner import Cli
from tests.app.helpers import CLIENT_KINDS, enqueue_with
from tests.app.jobs import Record
from tests.periodic.conftest import StartWorker
from tests.periodic.old_layout import (
    DAY,
    NOW,
    OLD_COUNTERS,
    OLD_DAYS,
    OLD_EPOCH,
    OLD_SCHEDULE,
    OLD_TOTALS,
    KeyValue,
    contents,
    renamed,
    write_old_layout,
)
from tests.support.processes import wait_until

#: Where step 1 moves each key.
MOVES = {OLD_SCHEDULE: keys.PERIODIC_SCHEDULE, OLD_EPOCH: keys.PERIODIC_EPOCH}
#: Where step 3 moves each counter: the part of the empty queue name, which reads add in.
COUNTER_MOVES = {
    old: "cogworker:{q:}:stat:" + old.removeprefix("cogworker:stat:") for old in OLD_COUNTERS
}
#: The writes of a whole migration: each key's move, and the number raised after each step.
WRITES = len(MOVES) + len(COUNTER_MOVES) + len(layout.STEPS)
MIGRATED: KeyValue = ("string", str(layout.current()).encode(), False)


@pytest.fixture
def old(rc: redis.Redis, redis_url: str) -> dict[str, KeyValue]:
    """The test's Redis holding the old layout's data set; every key of it."""
    write_old_layout(rc, redis_url)
    return contents(rc)


def _migrated(before: dict[str, KeyValue]) -> dict[str, KeyValue]:
    """`before` as a migration must leave it: the keys moved, the number written."""
    return {**renamed(before, {**MOVES, **COUNTER_MOVES}), keys.LAYOUT: MIGRATED}


def _read_as_before(rc: redis.Redis) -> None:
    """The processed and failed counters read, in total and per day, what the old release
    read from its global counters."""
    assert tracking.totals(rc) == {"processed": OLD_TOTALS["processed"],
                                   "failed": OLD_TOTALS["failed"]}  # fmt: skip
    for name, count in OLD_DAYS.items():
        assert tracking.daily_counts(rc, name, NOW, 1) == {DAY: count}


def test_step_one_moves_the_keys_the_old_release_wrote_to_where_the_code_reads_them() -> None:
    """The step's renames are the names above: from the old release's, to this code's."""
    assert {rename.old: rename.new for rename in layout.STEPS[0].renames} == MOVES


def test_the_counters_step_moves_each_counter_to_the_part_reads_add_in() -> None:
    """Every counter of the old release, total or day, goes to the migrated part's counter
    of the same name (and day), merged by adding."""
    (counters_step,) = (step for step in layout.STEPS if step.families)
    (family,) = counters_step.families
    assert {old: family.rename(old).new for old in OLD_COUNTERS} == COUNTER_MOVES
    assert family.merge == "add"
    assert COUNTER_MOVES[f"cogworker:stat:failed:{DAY}"] == keys.stat(
        counters.MIGRATED, "failed", DAY
    )


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


def test_migrate_again_moves_nothing(old: dict[str, KeyValue], rc: redis.Redis, cli: Cli) -> None:
    """A second run finds the layout up to date and changes nothing."""
    cli.run("migrate")
    answer = cli.run("migrate")

    assert answer.status == 0, answer
    assert answer.lines == [f"layout {layout.current()}: up to date, nothing to move"]
    assert contents(rc) == _migrated(old)


@pytest.mark.parametrize("written", range(WRITES + 1))
def test_a_migration_cut_short_is_finished_by_running_it_again(
    written: int, old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """A run that died after its first `written` writes (key moves, and the number raised
    after each step): the next run finishes the move, and the counters read as before."""
    store = LayoutStore(rc)
    writes = [
        write
        for each in layout.plan(0, store.found())
        for write in [*(lambda r=r: store.move(r) for r in each.renames),
                      lambda step=each.step: store.applied(step)]
    ]  # fmt: skip
    assert len(writes) == WRITES
    for write in writes[:written]:
        write()

    assert cli.run("migrate").status == 0
    assert contents(rc) == _migrated(old)
    _read_as_before(rc)


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
    assert rc.ttl(keys.stat(counters.MIGRATED, "processed", DAY)) > 0


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
    assert {(entry["old"], entry["type"], entry["entries"], entry["new"])
            for entry in document["keys"]} == {
        (OLD_SCHEDULE, "hash", 2, keys.PERIODIC_SCHEDULE),
        (OLD_EPOCH, "string", 1, keys.PERIODIC_EPOCH),
        *((old, "string", 1, new) for old, new in COUNTER_MOVES.items()),
    }  # fmt: skip
    assert contents(rc) == old


def test_migrate_waits_for_the_workers_to_stop(
    old: dict[str, KeyValue], rc: redis.Redis, cli: Cli
) -> None:
    """A process that beat within the orphan threshold: refused (exit 1), naming it, with
    nothing moved; once it is gone, the migration runs."""
    registry = ProcessRegistry(rc)
    registry.beat("host:2:running", {}, {}, 60, 0.0, beat_gap=60)

    refused = cli.run("migrate")

    assert refused.status == 1
    assert "stop the workers first" in refused.stderr
    assert "host:2:running" in refused.stderr
    assert not rc.exists(keys.PERIODIC_SCHEDULE)
    registry.remove("host:2:running")
    assert cli.run("migrate").status == 0


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
