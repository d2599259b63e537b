"""Waiting for a kept result on a real Redis: one write wakes every waiter and leaves the
record for the next; a missing jid index is made up for by asking every queue; and a
settlement writes the index before its script, the result with it."""

from __future__ import annotations

import threading

import redis

import cogworker
from cogworker.adapters import jid_index, results
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.dashboard_results import kept_result
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.domain import results as domain_results
from tests.support.clients import EitherClient
from tests.support.topology_marks import on_both_topologies

pytestmark = on_both_topologies

IDENTITY = "host:1:results"
JOB = b'{"class":"a.B","args":[],"jid":"j1","queue":"mail"}'


def _settle(rc: redis.Redis, kept: domain_results.Kept) -> bool:
    """Settle j1 (held by IDENTITY) as an ack keeping `kept`."""
    rc.lpush(keys.in_progress("mail", IDENTITY), JOB)
    outcome = OutcomeRecord(kind="ack", jid="j1", class_name="a.B", result=kept)
    order = SettleOrder(fetched=Fetched(queue="mail", raw=JOB), outcome=outcome)
    return SettleStore(rc).settle_many(IDENTITY, [order], 1_800_000_000.0) == [True]


def test_one_write_wakes_every_waiter_and_the_record_stays(rc: redis.Redis) -> None:
    """Three waiters blocked on a pending job all get its value from one settlement; the
    record is still there, kept for its keep; the index lasts as long."""
    rc.set(keys.jid_index("j1"), "mail", ex=600)
    found: list[results.Found] = []
    waiters = [
        threading.Thread(target=lambda: found.append(results.wait(rc, "j1", 20))) for _ in range(3)
    ]
    for waiter in waiters:
        waiter.start()
    record = domain_results.success_record('{"n":1}')
    assert _settle(rc, domain_results.Kept(queue="mail", record=record, keep=30, index_ttl=30))
    for waiter in waiters:
        waiter.join(20)
    assert found == [domain_results.Stored(outcome="success", value={"n": 1})] * 3
    assert rc.lrange(keys.result("mail", "j1"), 0, -1) == [record.encode()]
    assert 0 < rc.ttl(keys.result("mail", "j1")) <= 30
    assert 0 < rc.ttl(keys.jid_index("j1")) <= 30


def test_a_retry_drops_an_earlier_record_and_keeps_the_index(rc: redis.Redis) -> None:
    """A job retried after an earlier end (a dead job retried by hand) has no record until it
    ends again; its index now lasts through the retry's wait."""
    rc.rpush(keys.result("mail", "j1"), domain_results.ended_record("dead", "E", "old"))
    assert _settle(rc, domain_results.Kept(queue="mail", record=None, keep=30, index_ttl=900))
    assert not rc.exists(keys.result("mail", "j1"))
    assert results.wait(rc, "j1", 0) == "timed out"
    assert 30 < rc.ttl(keys.jid_index("j1")) <= 900


def test_a_job_buried_by_the_reconciler_stores_its_death(rc: redis.Redis) -> None:
    """A repeat orphan filed in dead keeping its result: its record says dead, with the error
    it was filed with, and its index points at its queue."""
    rc.rpush(keys.repeat_orphans("mail"), JOB)
    kept = domain_results.Kept(
        queue="mail",
        record=domain_results.ended_record("dead", "JobOrphanedError", "orphaned"),
        keep=30,
        index_ttl=30,
    )
    assert RecoverStore(rc).bury(
        keys.repeat_orphans("mail"), "list", JOB, "{}", 1e9, jid="j1", result=kept, queue="mail"
    )
    assert results.wait(rc, "j1", 0) == domain_results.Stored(
        outcome="dead", error_class="JobOrphanedError", error_message="orphaned"
    )
    assert rc.zcard(keys.dead("mail")) == 1


def test_without_its_index_a_result_is_found_by_asking_every_queue(rc: redis.Redis) -> None:
    """The index lost (a failover): a kept result is found all the same, in the queue's slot
    that holds it; a jid nothing holds is not found, without waiting."""
    rc.sadd(keys.QUEUES, "a", "mail", "z")
    rc.rpush(keys.result("mail", "j1"), domain_results.ended_record("expired", "", "late"))
    assert jid_index.locate(rc, "j1", results.probe("j1")) == jid_index.Located("mail")
    assert results.wait(rc, "j1", 5) == domain_results.Stored(
        outcome="expired", error_message="late"
    )
    assert kept_result(rc, "j1") == domain_results.Stored(outcome="expired", error_message="late")
    assert results.wait(rc, "j2", 5) == "not found"
    assert kept_result(rc, "j2") is None


def test_a_result_gone_after_its_job_ended_is_not_waited_for(
    rc: redis.Redis, either_client: EitherClient
) -> None:
    """A kept result evicted (deleted here, as `maxmemory` would) while the index its
    settlement wrote survives: `result()` without a timeout says at once that it is gone
    (`ResultNotFoundError`), with the sync and the async client alike."""
    record = domain_results.success_record('{"n":1}')
    assert _settle(rc, domain_results.Kept(queue="mail", record=record, keep=600, index_ttl=600))
    rc.delete(keys.result("mail", "j1"))
    assert rc.exists(keys.jid_index("j1"))
    answered: list[BaseException] = []

    def wait_for_good() -> None:
        try:
            either_client.result("j1")
        except cogworker.CogworkerError as error:
            answered.append(error)

    waiter = threading.Thread(target=wait_for_good, daemon=True)
    waiter.start()
    waiter.join(60)

    assert not waiter.is_alive(), "result() is still waiting for a result that is gone"
    [error] = answered
    assert isinstance(error, cogworker.ResultNotFoundError)
    assert "job j1: it ended, but its result is gone" in str(error)
    assert "maxmemory" in str(error)


def test_a_job_not_ended_is_still_waited_for(rc: redis.Redis) -> None:
    """An index written at the push (the job may still end) is no answer: the wait runs
    to its timeout."""
    rc.set(keys.jid_index("j1"), "mail", ex=600)

    assert results.wait(rc, "j1", 0.2) == "timed out"
