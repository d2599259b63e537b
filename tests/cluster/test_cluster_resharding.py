"""Resharding (issue #22): hash slots move from one primary of a cluster of the test's own to
another while a client enqueues and two workers fetch, run, settle, retry and poll; a move
costs latency, not jobs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
from redis.crc import key_slot

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters import slot_moves
from tests.cluster import jobs_reshard as jobs
from tests.cluster.test_cluster_drain import cluster_url
from tests.faults import oracle
from tests.faults.conftest import stop_all
from tests.support.clients import CLIENT_KINDS, client_of
from tests.support.cluster import LocalCluster
from tests.support.cluster_reshard import Primary, move_slot, primaries, reshard
from tests.support.processes import CogworkerFactory, CogworkerProcess, wait_until

# Alone on the machine: its own cluster, two workers and a slot-by-slot move load it, and
# "each job once" holds only while every beat lands within the orphan threshold.
pytestmark = pytest.mark.solo

APP = "tests.cluster.jobs_reshard:config"
#: How many slots move, as the issue says.
MOVED_SLOTS = 1000
#: Jobs held running on each moved queue until its slot is half-moved.
HELD = 2
#: Plain jobs per queue before the workers start, and pushed mid-move.
PLAIN, PLAIN_MIDWAY = 150, 20
#: Jobs failing once, and jobs due in a second, per queue and per enqueueing.
FAILING, SCHEDULED = 3, 3
#: How many times redis-py sends a command a slot's move refuses before it gives up.
REDIS_PY_ATTEMPTS = redis.RedisCluster.RedisClusterRequestTTL

#: Runs expected per jid.
Expected = dict[str, int]


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """Three primaries, no replicas: the test's own, to reshard."""
    cluster = LocalCluster(tmp_path / "cluster", replicas=0).start()
    yield cluster
    cluster.close()


@pytest.fixture
def inspect(own_cluster: LocalCluster) -> Iterator[redis.RedisCluster]:
    """A plain client of the test's cluster, for looking at keys."""
    client = own_cluster.client()
    yield client
    client.close()


def slot_of(queue: str) -> int:
    """The hash slot of `queue`'s keys."""
    return key_slot(keys.queue(queue).encode())


def owner(nodes: list[Primary], queue: str) -> Primary:
    """The primary owning `queue`'s slot."""
    [found] = [node for node in nodes if slot_of(queue) in node.slots()]
    return found


def refusals(*nodes: Primary) -> int:
    """How many TRYAGAIN replies `nodes` have sent in all."""
    return sum(node.errors("TRYAGAIN") for node in nodes)


def assert_moved(source: Primary, target: Primary, queue: str) -> None:
    """`queue`'s keys (its counters, at least) are on `target`, none left on `source`."""
    assert source.keys_in(slot_of(queue)) == 0
    assert target.keys_in(slot_of(queue)) > 0


def enqueue_traffic(client: cogworker.Client, queue: str, plain: int) -> Expected:
    """Plain jobs in one bulk push, jobs failing once and jobs due in a second on `queue`."""
    pushed = client.enqueue_many(jobs.COUNT[queue], [[n] for n in range(plain)])
    failing = [client.enqueue(jobs.FAILS_ONCE[queue], n) for n in range(FAILING)]
    later = [client.enqueue_in(1.0, jobs.COUNT[queue], n) for n in range(SCHEDULED)]
    expected = {jid: 1 for jid in [*pushed, *later] if jid is not None}
    expected.update({jid: 2 for jid in failing if jid is not None})
    assert len(expected) == plain + FAILING + SCHEDULED
    return expected


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_an_enqueue_waits_out_its_queue_s_slot_move_within_patience(
    own_cluster: LocalCluster, inspect: redis.RedisCluster, kind: str
) -> None:
    """A scheduled push onto a queue whose slot is moving (its one key, the queue, moved
    already) is refused with TRYAGAIN more often than redis-py sends it again: it is sent
    again until the move ends and lands once, on the new primary; one refused for longer
    than `slot_moves.PATIENCE` fails with `EnqueueUnavailableError`, pushing nothing.
    The same through `Client` and `AsyncClient`."""
    nodes = primaries(own_cluster.primaries())
    source, target = owner(nodes, "default"), owner(nodes, "mail")
    others = [node for node in nodes if node not in (source, target)]
    client = client_of(kind, cogworker.Config(redis_url=cluster_url(own_cluster)))
    waiting = client.enqueue(jobs.COUNT["default"], 0)
    given_up: list[str] = []
    landing: list[Future[str | None]] = []

    def push_refused(number: int) -> Future[str | None]:
        """A push that only this client sends, refused more often than redis-py tries."""
        refused = refusals(source, target)
        push = pusher.submit(client.enqueue_in, 60.0, jobs.COUNT["default"], number)
        wait_until(
            lambda: push.done() or refusals(source, target) > refused + REDIS_PY_ATTEMPTS,
            30,
            message="the push was never refused while its slot moved",
        )
        assert not push.done(), push.result()
        return push

    def push_while_moving(slot: int) -> None:
        assert (source.keys_in(slot), target.keys_in(slot)) == (0, 1)
        with pytest.raises(cogworker.EnqueueUnavailableError, match="moving") as failed:
            push_refused(1).result(timeout=slot_moves.PATIENCE + 30)
        given_up.extend(failed.value.unknown)
        landing.append(push_refused(2))

    with ThreadPoolExecutor(1) as pusher:
        move_slot(source, target, others, slot_of("default"), midway=push_while_moving)
        [scheduled] = [push.result(timeout=30) for push in landing]
    client.close()

    assert_moved(source, target, "default")
    where = oracle.places(inspect)
    assert waiting is not None
    assert where[waiting] == [keys.queue("default")]
    assert where[str(scheduled)] == [keys.sorted_set("schedule", "default")]
    assert len(given_up) == 1
    assert given_up[0] not in where


def test_a_reshard_of_1000_slots_mid_drain_runs_each_job_once(
    own_cluster: LocalCluster,
    inspect: redis.RedisCluster,
    cogworker_factory: CogworkerFactory,
    tmp_path: Path,
) -> None:
    """The first 1,000 slots of a primary, `default`'s and `reports`' among them, move to
    another primary while jobs of four queues drain.  `default`'s slot is held half-moved
    until a client pushes onto it, its running jobs end and TRYAGAIN is answered;
    `reports`' until a worker gives up writing its running jobs' acks (for later).  Each
    job runs once (a retried one twice), nothing is left in any list or set, the workers
    live on, and the moved queues' keys are on the new primary."""
    url = cluster_url(own_cluster)
    oracle_file = tmp_path / "oracle"
    nodes = primaries(own_cluster.primaries())
    source, target = owner(nodes, "default"), owner(nodes, "mail")
    moving = source.slots()[:MOVED_SLOTS]  # the slots `redis-cli --cluster reshard` picks
    assert {slot_of(queue) for queue in jobs.MOVED} <= set(moving)
    assert slot_of("search") not in moving
    assert owner(nodes, "search") == source

    client = cogworker.Client(cogworker.Config(redis_url=url))
    gates = {queue: tmp_path / f"gate-{queue}" for queue in jobs.MOVED}
    held = {
        queue: [client.enqueue(jobs.HELD[queue], str(gates[queue])) for _ in range(HELD)]
        for queue in jobs.MOVED
    }
    expected: Expected = {jid: 1 for jids in held.values() for jid in jids if jid is not None}
    for queue in jobs.QUEUES:
        expected.update(enqueue_traffic(client, queue, PLAIN))

    env = {"COGWORKER_ORACLE": str(oracle_file)}
    workers = [cogworker_factory(APP, redis_url=url, env=env) for _ in range(2)]
    wait_until(
        lambda: all(oracle.runs(oracle_file)[0][jid] for jids in held.values() for jid in jids),
        30,
        message=lambda: _tails(workers),
    )
    pushes: list[Future[Expected]] = []

    def hold(slot: int) -> None:
        """In a moved queue's half-moved slot: end its running jobs, and wait as the
        test's docstring says."""
        if slot == slot_of("default"):
            refused = refusals(source, target)
            pushes.append(pusher.submit(enqueue_traffic, client, "default", PLAIN_MIDWAY))
            gates["default"].touch()
            wait_until(
                lambda: (
                    set(held["default"]) <= oracle.finished(oracle_file)
                    and refusals(source, target) > refused
                ),
                30,
                message=lambda: f"default's slot half-moved:\n{_tails(workers)}",
            )
        elif slot == slot_of("reports"):
            gates["reports"].touch()
            wait_until(
                lambda: any("couldn't acknowledge" in worker.log_text() for worker in workers),
                30,
                message=lambda: f"reports' slot half-moved:\n{_tails(workers)}",
            )

    with ThreadPoolExecutor(1) as pusher:
        reshard(
            source,
            target,
            [node for node in nodes if node not in (source, target)],
            moving,
            midway=hold,
        )
        for push in pushes:
            expected.update(push.result(timeout=30))
    wait_until(
        lambda: _runs(oracle_file) == expected, 60, message=lambda: _missing(oracle_file, expected)
    )
    assert all(worker.is_running for worker in workers), _tails(workers)
    stop_all(*workers)
    client.close()

    starts, ends = oracle.runs(oracle_file)
    assert starts == ends == Counter(expected)
    for worker in workers:
        assert "Traceback" not in worker.log_text(), worker.log_tail()
    _assert_drained(inspect, expected)
    assert not set(moving) & set(source.slots())
    assert set(moving) <= set(target.slots())
    for queue in jobs.MOVED:
        assert_moved(source, target, queue)


def _assert_drained(inspect: redis.RedisCluster, expected: Expected) -> None:
    """No queue, set or list holds a job; no process or in-progress key is left."""
    for queue in jobs.QUEUES:
        assert inspect.llen(keys.queue(queue)) == 0
        for name in keys.SET_NAMES:
            assert inspect.zcard(keys.sorted_set(name, queue)) == 0, (queue, name)
    oracle.assert_each_in_one_place(inspect, expected, done=set(expected))
    oracle.assert_nothing_left_behind(inspect)


def _runs(oracle_file: Path) -> dict[str, int]:
    """Finished runs per jid so far."""
    return dict(oracle.runs(oracle_file)[1])


def _missing(oracle_file: Path, expected: Expected) -> str:
    runs = _runs(oracle_file)
    wrong = {
        jid: (runs.get(jid, 0), want) for jid, want in expected.items() if runs.get(jid, 0) != want
    }
    return f"{len(wrong)} jobs not run as expected (runs, expected): {list(wrong.items())[:10]}"


def _tails(workers: list[CogworkerProcess]) -> str:
    return "\n".join(f"--- {worker.log_path.name}\n{worker.log_tail()}" for worker in workers)
