"""keep_result and result() at the edges: values that can't be one refused naming them, the
client's default and the class's option in the payload, and the testing modes' results."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.faults.jobs_results import AsyncReturns, KeepsNothing, Returns, ReturnsASet


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, "1h", True])
def test_a_keep_result_that_cant_be_one_is_refused_naming_it(value: object) -> None:
    """On a class: a TypeError naming the class and the value; on a Config: a ConfigError."""
    with pytest.raises(TypeError, match=rf"Broken: keep_result must be .*got {value!r}"):

        class Broken(cogworker.Job, keep_result=value):  # type: ignore[call-arg]  # what is tested
            def perform(self) -> None: ...

    with pytest.raises(cogworker.ConfigError, match=r"Config\.keep_result"):
        cogworker.Config(keep_result=value)  # type: ignore[arg-type]  # what is tested


def test_max_result_bytes_must_be_positive() -> None:
    """A cap of 0 or less can hold nothing: refused naming the setting."""
    with pytest.raises(cogworker.ConfigError, match="max_result_bytes must be a whole number"):
        cogworker.Config(max_result_bytes=0)


def test_a_bad_jid_or_timeout_is_refused_before_redis(client: cogworker.Client) -> None:
    """result() refuses what can't be a jid or a timeout, naming it."""
    with pytest.raises(ValueError, match="jid 'not a jid!'"):
        client.result("not a jid!")
    for timeout in (-1, math.nan, "5", True):
        with pytest.raises(ValueError, match=f"timeout must be .*got {timeout!r}"):
            client.result("j1", timeout=timeout)  # type: ignore[arg-type]  # what is tested


def test_the_clients_default_and_the_class_option_go_in_the_payload(
    redis_url: str, rc: redis.Redis
) -> None:
    """Config.keep_result applies to classes without their own; a class's option wins; the
    jid index is written with the push, for at least the wait, the allowance and the keep."""
    client = cogworker.Client(cogworker.Config(redis_url=redis_url, keep_result=5))
    plain, own = client.enqueue(KeepsNothing), client.enqueue_in(100, Returns, 1)
    client.close()
    queued = json.loads(rc.lrange(keys.queue("default"), 0, -1)[0])
    scheduled = json.loads(rc.zrange(keys.schedule("default"), 0, -1)[0])
    assert (queued["jid"], queued["keep_result"]) == (plain, 5)
    assert (scheduled["jid"], scheduled["keep_result"]) == (own, 60)
    assert rc.get(keys.jid_index(str(own))) == b"default"
    assert rc.ttl(keys.jid_index(str(own))) > 100 + 7 * 86_400


def test_the_testing_modes_keep_results(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inline() keeps a run's value for result() and raises an unstorable one at once; fake()
    times out on a job not drained yet, then has its value; async jobs too."""
    monkeypatch.setenv("COGWORKER_ORACLE", str(tmp_path / "oracle.log"))  # Returns notes runs
    client = cogworker.Client(cogworker.Config(redis_url=redis_url))
    with cogworker.testing.inline():
        assert client.result(str(client.enqueue(Returns, [1, "a"]))) == [1, "a"]
        with pytest.raises(cogworker.UnstorableResultError, match="return value is set"):
            client.enqueue(ReturnsASet)
        with pytest.raises(cogworker.ResultNotFoundError):
            client.result(str(client.enqueue(KeepsNothing)))
    with cogworker.testing.fake() as queue:
        jid = str(client.enqueue(AsyncReturns, {"k": None}))
        with pytest.raises(cogworker.ResultTimeoutError):
            client.result(jid, timeout=5)
        asyncio.run(queue.adrain())
        assert client.result(jid) == {"k": None}
    client.close()
