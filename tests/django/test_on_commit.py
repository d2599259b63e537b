"""`enqueue_on_commit`: a job reaches Redis when its transaction commits, never before,
and a real worker of the Django project then finds the row it needs."""

from __future__ import annotations

import pytest
import redis
from django.db import transaction

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.contrib.django import enqueue_on_commit
from tests.support.processes import CogworkerProcess, wait_until

# The tests import the project's modules (shop.*) once the `configured` fixture has set
# the project up.

#: A worker of the project starts Django first: generous.
RUN_TIMEOUT = 30.0


class RolledBackError(Exception):
    """What a transaction raised after enqueueing the job `jid`."""

    def __init__(self, jid: str) -> None:
        super().__init__(jid)
        self.jid = jid


def order_then_fail() -> None:
    """Like a view that fails after placing an order: the row and its job roll back."""
    from shop.jobs import ShipOrder
    from shop.models import Order

    with transaction.atomic():
        order = Order.objects.create(note="rolled back")
        raise RolledBackError(enqueue_on_commit(ShipOrder, order.pk))


def queued(rc: redis.Redis) -> int:
    """How many jobs wait on the default queue."""
    return int(rc.llen(keys.queue("default")))


def wait_for_status(
    client: cogworker.Client, jid: str, status: str, worker: CogworkerProcess
) -> None:
    """Wait until the job `jid` has `status`."""
    wait_until(
        lambda: client.status(jid) == status,
        RUN_TIMEOUT,
        message=lambda: f"{jid} is {client.status(jid)}, not {status}:\n{worker.log_tail()}",
    )


def test_the_job_is_pushed_at_the_commit_and_finds_its_row(
    configured: cogworker.Client, shop_worker: CogworkerProcess, rc: redis.Redis
) -> None:
    """Inside atomic() nothing is pushed, even past a nested block; after the commit the
    worker runs the job once and it finds the committed row."""
    from shop.jobs import ShipOrder
    from shop.models import Order

    with transaction.atomic():
        order = Order.objects.create(note="to ship")
        with transaction.atomic():
            jid = enqueue_on_commit(ShipOrder, order.pk)
        assert configured.status(jid) is None
        assert queued(rc) == 0
    wait_for_status(configured, jid, "complete", shop_worker)
    order.refresh_from_db()
    assert order.shipped


def test_a_rolled_back_transaction_enqueues_nothing(
    configured: cogworker.Client, shop_worker: CogworkerProcess, rc: redis.Redis
) -> None:
    """A job enqueued in a transaction that rolls back never runs: a job enqueued after it
    runs, and the first is in no set and has no status (run, it would have died)."""
    from shop.jobs import ShipOrder
    from shop.models import Order

    with pytest.raises(RolledBackError) as rolled_back:
        order_then_fail()
    later = enqueue_on_commit(ShipOrder, Order.objects.create(note="later").pk)
    wait_for_status(configured, later, "complete", shop_worker)
    assert configured.status(rolled_back.value.jid) is None
    assert rc.zcard(keys.dead("default")) == 0
    assert rc.zcard(keys.retry("default")) == 0


def test_outside_a_transaction_it_enqueues_at_once(
    configured: cogworker.Client, rc: redis.Redis
) -> None:
    """In autocommit there is nothing to wait for: the job is on its queue when the call
    returns, with the jid it returned."""
    from shop.jobs import ShipOrder
    from shop.models import Order

    jid = enqueue_on_commit(ShipOrder, Order.objects.create(note="at once").pk)
    assert queued(rc) == 1
    assert configured.status(jid) == "queued"


def test_it_waits_for_the_transaction_of_the_database_named(
    configured: cogworker.Client, shop_worker: CogworkerProcess, rc: redis.Redis
) -> None:
    """`using=` names the database whose commit counts: in a transaction of "other", the
    job waits for that commit (the default database is in autocommit meanwhile)."""
    from shop.jobs import ShipOrder
    from shop.models import Order

    with transaction.atomic(using="other"):
        order = Order.objects.using("other").create(note="elsewhere")
        jid = enqueue_on_commit(ShipOrder, order.pk, "other", using="other")
        assert queued(rc) == 0
    wait_for_status(configured, jid, "complete", shop_worker)
    assert Order.objects.using("other").get(pk=order.pk).shipped


def test_bad_arguments_raise_at_the_call_inside_the_transaction(
    configured: cogworker.Client, rc: redis.Redis
) -> None:
    """The job is built at the call, so an argument JSON can't carry raises there (the
    transaction can still roll back), not after the commit."""
    from shop.jobs import ShipOrder

    with pytest.raises(TypeError, match="JSON-native"), transaction.atomic():
        enqueue_on_commit(ShipOrder, {1, 2})  # type: ignore[arg-type]  # the mistake tested
    assert queued(rc) == 0


def test_the_callers_jid_is_the_jobs_and_repeating_it_pushes_once(
    configured: cogworker.Client, rc: redis.Redis
) -> None:
    """With a jid of the caller's, the job has it, and a second enqueue with it (a retried
    request) pushes nothing more."""
    from shop.jobs import ShipOrder
    from shop.models import Order

    order = Order.objects.create(note="twice")
    for _ in range(2):
        with transaction.atomic():
            assert enqueue_on_commit(ShipOrder, order.pk, jid=f"ship-{order.pk}") == (
                f"ship-{order.pk}"
            )
    assert queued(rc) == 1
    assert configured.status(f"ship-{order.pk}") == "queued"


def test_in_inline_mode_the_job_runs_at_the_commit(configured: cogworker.Client) -> None:
    """The testing modes apply: inline, the job runs in the caller when the transaction
    commits, and finds the row."""
    from shop.jobs import ShipOrder
    from shop.models import Order

    with cogworker.testing.inline(), transaction.atomic():
        order = Order.objects.create(note="inline")
        enqueue_on_commit(ShipOrder, order.pk)
        assert not Order.objects.get(pk=order.pk).shipped
    order.refresh_from_db()
    assert order.shipped
