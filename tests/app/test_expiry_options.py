"""Expiry as given: at enqueue (seconds from now or from a scheduled run's due time, or a
time) or as a class option; a value that can't be one is refused, naming it, before
anything is pushed."""

from __future__ import annotations

import json
import math

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.jobs import Record
from tests.support.clients import EitherClient

BAD_SECONDS = [0, -5, math.nan, math.inf, "60", True]


class Expiring(cogworker.Job, expires_in=30):
    """A class whose runs expire 30 s after they are due."""

    def perform(self) -> None:
        """Nothing."""


def payload_of(rc: redis.Redis, queue_key: str) -> dict[str, object]:
    """The one payload on `queue_key` (a list), decoded."""
    [raw] = rc.lrange(queue_key, 0, -1)
    return dict(json.loads(raw))


@pytest.mark.parametrize("value", BAD_SECONDS)
def test_a_class_refuses_an_expiry_that_is_no_positive_number(value: object) -> None:
    """expires_in= at class definition: TypeError naming the class and the value."""
    with pytest.raises(TypeError, match="expires_in") as refused:

        class Bad(cogworker.Job, expires_in=value):  # type: ignore[arg-type]  # on purpose
            def perform(self) -> None: ...

    assert "Bad" in str(refused.value)
    assert repr(value) in str(refused.value)


@pytest.mark.parametrize("value", BAD_SECONDS)
def test_an_enqueue_refuses_a_bad_expiry_and_pushes_nothing(
    either_client: EitherClient, rc: redis.Redis, value: object
) -> None:
    """expires_in= at enqueue (one job or many, either client): ValueError naming the value;
    nothing queued."""
    client = either_client
    with pytest.raises(ValueError, match="expires_in") as refused:
        client.enqueue(Record, "x", expires_in=value)  # type: ignore[arg-type]  # on purpose
    assert repr(value) in str(refused.value)
    with pytest.raises(ValueError, match="expires_in"):
        client.enqueue_many(Record, [["a"], ["b"]], expires_in=value)  # type: ignore[arg-type]
    assert rc.llen(keys.queue("default")) == 0


def test_expiry_is_stored_from_now_from_the_due_time_or_from_the_class(
    either_client: EitherClient, rc: redis.Redis
) -> None:
    """Through either client: expires_in counts from the enqueue, or a scheduled run's due
    time; the class's option applies when none is given; expires_at is kept as given; both
    at once is refused."""
    client = either_client
    client.enqueue(Record, "now", expires_in=60)
    job = payload_of(rc, keys.queue("default"))
    assert job["expires_at"] == pytest.approx(float(job["created_at"]) + 60)  # type: ignore[arg-type]
    rc.delete(keys.queue("default"))

    client.enqueue_in(1000, Record, "later", expires_in=60)
    [(raw, due)] = rc.zrange(keys.schedule("default"), 0, -1, withscores=True)
    assert json.loads(raw)["expires_at"] == pytest.approx(due + 60)

    client.enqueue(Expiring)
    job = payload_of(rc, keys.queue("default"))
    assert job["expires_at"] == pytest.approx(float(job["created_at"]) + 30)  # type: ignore[arg-type]
    rc.delete(keys.queue("default"))

    client.enqueue(Expiring, expires_at=12345.0)
    assert payload_of(rc, keys.queue("default"))["expires_at"] == 12345.0
    with pytest.raises(ValueError, match="not both"):
        client.enqueue(Record, "x", expires_in=1, expires_at=2)
