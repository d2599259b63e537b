"""Redis work as values, decided without Redis: where a cluster pipeline's commands go and
what is sent again (`cluster_rounds`), what a pipeline sends again after NOSCRIPT
(`scripts.pipeline_run`), and no private redis-py anywhere in src.  (Against real
servers: tests/cluster/, tests/adapters/test_scripts_async.py, tests/faults/.)"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster
from redis.exceptions import AskError, MovedError, NoScriptError, ResponseError, TryAgainError

import cogworker.adapters
import cogworker.app
from cogworker.adapters import cluster_rounds, durable_writes, scripts, steps
from cogworker.adapters.command_values import Command, Commands, first_key
from cogworker.adapters.replication import Replication
from cogworker.adapters.slot_moves import refused_while_moving

SRC = Path(__file__).parents[2] / "src"


@attrs.frozen
class Node:
    """A cluster node as the rounds see one: a name and a host."""

    name: str
    host: str = "127.0.0.1"


def evalsha(script: scripts.LuaScript, *keys_and_args: str) -> Command:
    """The command `script.queue` queues for one key and the rest arguments."""
    return (("EVALSHA", script.sha, 1, *keys_and_args), {})


def queued(build: Callable[[Commands], Any]) -> list[Command]:
    """The commands `build` queues on a cluster pipeline (nothing sent)."""
    sent: list[list[Command]] = []
    pipe = Commands(lambda commands, _raise: sent.append(commands) or [])
    build(pipe)
    pipe.execute()
    return sent[0]


def test_a_cluster_pipeline_is_the_commands_redis_py_would_send() -> None:
    """Queued on a cluster's pipeline, redis-py's commands become values: their arguments
    and their reply's options, in order, with nothing sent until `execute`."""
    commands = queued(
        lambda pipe: (
            pipe.sadd("s", "a").zrangebyscore("z", 0, 5, withscores=True).execute_command("TIME")
        )
    )
    assert [args for args, _options in commands] == [
        ("SADD", "s", "a"),
        ("ZRANGEBYSCORE", "z", 0, 5, "WITHSCORES"),
        ("TIME",),
    ]
    assert commands[1][1]["withscores"] is True


def test_a_command_is_placed_by_its_first_key() -> None:
    """A script by its first KEYS, another command by its first argument; none for a
    command naming no key (any node serves it)."""
    assert first_key(("EVALSHA", "abc", 2, "k1", "k2", "arg")) == "k1"
    assert first_key((b"EVALSHA", "abc", 0, "arg")) is None
    assert first_key(("LPUSH", "queue", "job")) == "queue"
    assert first_key(("TIME",)) is None


class Cluster:
    """Does the rounds' steps as a cluster whose node answers each part with the next of
    `answers` (a list of replies, or an exception raised while sending)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.sent: list[list[Command]] = []
        self.paused = 0

    def perform(self, step: cluster_rounds.Step) -> Any:
        match step:
            case cluster_rounds.Locate(_key):
                return Node("a")
            case cluster_rounds.Send(_node, commands):
                self.sent.append(commands)
                answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
                if isinstance(answer, Exception):
                    raise answer
                return list(answer)
            case cluster_rounds.Pause(_seconds):
                self.paused += 1
                return None
            case cluster_rounds.Reload(_script):
                return None
            case cluster_rounds.Moved(error) | cluster_rounds.Asked(error):
                return Node(f"{error.host}:{error.port}")
        raise AssertionError(step)

    def run(
        self, commands: list[Command], replication: Replication = cluster_rounds.NO_WAIT
    ) -> Any:
        return steps.driven(cluster_rounds.rounds(commands, replication), self.perform)


def test_a_plain_cluster_pipeline_keeps_errors_in_place_and_sends_no_wait() -> None:
    """Without replicas asked for, a node's part ends with no WAIT, and a refused command's
    error stays in its place among the replies."""
    wrong = ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")
    cluster = Cluster([1, wrong])
    written = cluster.run([(("SADD", "s", "a"), {}), (("LLEN", "s"), {})])
    assert written.replies == [1, wrong]
    assert [args[0] for args, _options in cluster.sent[0]] == ["SADD", "LLEN"]
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        written.checked()


def test_a_lost_connection_is_raised_and_nothing_is_sent_again() -> None:
    """A node whose connection dropped may have run its part: the error is raised, and
    the rounds send nothing more (a job move sent again would apply twice)."""
    cluster = Cluster(redis.ConnectionError("gone"), [1])
    with pytest.raises(redis.ConnectionError):
        cluster.run([evalsha(scripts.SETTLE, "k", "x")])
    assert len(cluster.sent) == 1


def test_a_command_refused_while_its_slot_moves_gives_up_as_redis_py_does() -> None:
    """A command answered TRYAGAIN is sent again after a pause, for as long as a single
    command is; then its reply is redis-py's "TTL exhausted", which the callers name a
    slot's move."""
    cluster = Cluster([TryAgainError("TRYAGAIN")])
    written = cluster.run([(("LPUSH", "q", "job"), {})])
    [reply] = written.replies
    assert refused_while_moving(reply)
    assert cluster.paused == cluster_rounds.TRY_AGAIN_ROUNDS


def test_a_durable_cluster_part_ends_with_its_wait() -> None:
    """With replicas asked for, each node's part ends with a WAIT, whose reply is what
    the writes reached."""
    one = Replication(replicas=1, timeout=1.0)
    cluster = Cluster([1, 0])
    written = cluster.run([(("LPUSH", "q", "job"), {})], one)
    assert cluster.sent[0][-1][0][0] == "WAIT"
    assert written.outcome(one)[1] is not None  # reached 0 of 1


def run_on_one_server(commands: list[Command], *answers: list[Any]) -> tuple[list[Any], list[Any]]:
    """`pipeline_run` done with `answers` (the pipeline's, then each sending again's): the
    replies, and the steps it took."""
    taken: list[Any] = []
    replies = iter(answers)

    def perform(step: Any) -> Any:
        taken.append(step)
        return next(replies)

    return steps.driven(scripts.pipeline_run(commands), perform), taken


def test_a_forgotten_script_is_sent_again_with_the_final_wait() -> None:
    """A script answered NOSCRIPT is loaded and sent again, with the WAIT ending the
    pipeline after it on the same connection (it covers the script's writes too)."""
    push = evalsha(scripts.SCHEDULE, "q", "job")
    wait: Command = (("WAIT", 1, 1000), {})
    replies, taken = run_on_one_server(
        [push, (("SADD", "s", "q"), {}), wait], [NoScriptError("NOSCRIPT"), 1, 0], [1, 1]
    )
    assert replies == [1, 1, 1]
    assert taken[1] == scripts.Again(scripts.SCHEDULE, [push, wait])


def test_another_error_is_raised_after_the_scripts_before_it_ran_again() -> None:
    """An error after a forgotten script is raised once that script ran again."""
    push = evalsha(scripts.SCHEDULE, "q", "job")
    wrong = ResponseError("WRONGTYPE")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        run_on_one_server([push, (("SADD", "s", "q"), {})], [NoScriptError("NOSCRIPT"), wrong], [1])


#: redis-py's private parts cogworker used to read or patch (issue #36).
PRIVATE_REDIS_PY = re.compile(
    r"\._execution_strategy|\._determine_slot|parent_execute_command|__class__ *="
)


def test_no_private_redis_py_is_read_or_patched() -> None:
    """No module of src reads redis-py's private attributes, patches an instance's methods
    or swaps its class: a redis-py release may change any of them."""
    found = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PRIVATE_REDIS_PY.search(line)
    ]
    assert found == []


#: redis-py's clients and pipelines, which cogworker uses as shipped (#36).
REDIS_PY_CLIENTS = (
    redis.Redis,
    redis.RedisCluster,
    redis.asyncio.Redis,
    redis.asyncio.RedisCluster,
    redis.client.Pipeline,
    redis.cluster.ClusterPipeline,
    redis.asyncio.client.Pipeline,
    redis.asyncio.cluster.ClusterPipeline,
)
#: The subclasses #36 item 1 has still to replace by plain clients (the cluster
#: clients' outage mapping, pinned connections and asyncio turns); none may be added.
NOT_YET_PLAIN = {
    "cogworker.adapters.async_cluster.AsyncCluster",
    "cogworker.adapters.cluster_client.ClusterClient",
    "cogworker.adapters.per_thread.PinnedClusterClient",
}


def test_no_redis_py_client_is_subclassed() -> None:
    """No class of cogworker's is a redis-py client or pipeline (beyond the ones still to
    go): one is used as redis-py ships it, whose subclass a release may break."""
    for package in (cogworker.adapters, cogworker.app):  # (contrib's need a framework set up)
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(module.name)
    found = {
        f"{kind.__module__}.{kind.__qualname__}"
        for kind in _subclasses(REDIS_PY_CLIENTS)
        if kind.__module__.startswith("cogworker.")
    }
    assert found == NOT_YET_PLAIN


def _subclasses(roots: tuple[type, ...]) -> set[type]:
    """Every class below `roots`, however deep."""
    found: set[type] = set()
    waiting = [sub for root in roots for sub in root.__subclasses__()]
    while waiting:
        kind = waiting.pop()
        if kind not in found:
            found.add(kind)
            waiting.extend(kind.__subclasses__())
    return found


def test_durable_writes_decide_where_their_wait_goes() -> None:
    """One server: the pipeline ends with the WAIT, whose reply is what the writes
    reached; no replicas asked for: no WAIT; a cluster: each primary's part ends with its
    own (the rounds)."""
    one = Replication(replicas=1, timeout=1.0)
    plain = steps.driven(durable_writes.durable([], Replication(), False), lambda step: [1])
    assert plain == ([1], None)
    taken: list[Any] = []
    single = durable_writes.durable([], one, False)
    replies, short = steps.driven(single, lambda step: taken.append(step) or [1, 1])
    assert (replies, short) == ([1], None)
    assert taken == [durable_writes.RunPipeline(one.wait_args())]
    cluster = Cluster([1, 1])
    on_cluster = durable_writes.durable([(("LPUSH", "q", "job"), {})], one, True)
    assert steps.driven(on_cluster, cluster.perform) == ([1], None)
    assert cluster.sent[0][-1][0][0] == "WAIT"


def test_a_command_bounced_while_its_slot_moves_is_patient_as_a_single_command() -> None:
    """Mid-move, a script is asked to the new node, refused there (TRYAGAIN: its keys not
    all moved), moved back: it keeps being sent for the TRYAGAIN pauses' patience, not
    only for redis-py's 16 redirects."""
    asked = AskError("1 127.0.0.1:7001")
    moved = MovedError("1 127.0.0.1:7000")
    bounces = [[asked], [b"OK", TryAgainError("TRYAGAIN")], [moved]] * cluster_rounds.ROUNDS
    cluster = Cluster(*bounces, [1])
    written = cluster.run([evalsha(scripts.SCHEDULE, "q", "job")])
    assert written.replies == [1]
    assert cluster.paused == cluster_rounds.ROUNDS
