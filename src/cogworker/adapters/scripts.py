"""The Lua scripts in `lua/`, run by SHA with a reload when Redis forgot them.

redis-py's own `Script` objects check `SCRIPT EXISTS` before every pipeline:
one more round trip per batch on the hottest paths.  Here a script is sent
by SHA and loaded only when Redis answers NOSCRIPT (after a restart or a
`SCRIPT FLUSH`).  A NOSCRIPT answer means the script did not run, so sending
it again can't apply it twice.  The same goes for redis.asyncio clients
(`run_async`, `run_pipeline_async`): what is sent is the same, only the
sending is awaited.  On a Redis Cluster (either client) a script runs on the
node owning its keys' slot, and the reload loads it on every primary.

Every script is sent with `lua/_checks.lua` in front of it: the argument
checks each one runs before its first write (Lua doesn't roll back).

Every script's header states its shape in one line, the contract its
callers keep: ``-- shape: KEYS 14, ARGV 23`` (exactly), or
``-- shape: KEYS 3 + 3n, ARGV 4 + 2n`` (a fixed part, then any number of
groups).  A call whose keys or arguments don't fit is refused here, before
Redis sees it (tests/adapters/test_script_contracts.py checks each header
against the `KEYS[i]`/`ARGV[i]` its text lists and uses).  A script calling
functions of a shared file says so in a line ``-- uses: _tallies``: that
file goes in front of it, after `_checks.lua`.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from typing import Any

import attrs
import redis
import redis.asyncio
import redis.asyncio.cluster
from redis.exceptions import NoScriptError

from cogworker.adapters.redis_client import (
    AsyncRedisClient,
    AsyncRedisPipeline,
    RedisClient,
    RedisPipeline,
)
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.slot_moves import (
    patience_from_now,
    send_refused_again,
    send_refused_again_async,
    while_slot_moves,
    while_slot_moves_async,
)

KeyOrArg = str | bytes | int | float
#: A pipeline of any client: scripts and commands are queued on all alike (redis-py
#: leaves a sync cluster's pipeline untyped).
Pipeline = redis.client.Pipeline | AsyncRedisPipeline


def _source_of(name: str) -> str:
    return resources.files("cogworker.adapters").joinpath(f"lua/{name}.lua").read_text()


_CHECKS = _source_of("_checks")
#: `-- uses: _a, _b`: the shared files of lua/ a script calls functions of.
_USES_LINE = re.compile(r"^-- uses: (.+)$", re.M)
_SHAPE_LINE = re.compile(r"^-- shape: KEYS (\d+)(?: \+ (\d+)n)?, ARGV (\d+)(?: \+ (\d+)n)?$", re.M)


@attrs.frozen
class Count:
    """How many keys (or arguments) a script takes: `fixed`, then groups of `group` (0: none)."""

    fixed: int
    group: int = 0

    def fits(self, count: int) -> bool:
        """Whether `count` items make the fixed part and whole groups."""
        extra = count - self.fixed
        if self.group == 0:
            return extra == 0
        return extra >= 0 and extra % self.group == 0

    def __str__(self) -> str:
        return f"{self.fixed} + {self.group}n" if self.group else str(self.fixed)


@attrs.frozen
class Shape:
    """A script's contract: how many KEYS and ARGV it takes."""

    keys: Count
    args: Count

    @classmethod
    def of(cls, name: str, source: str) -> Shape:
        """The shape stated in `source`'s header; ValueError if it states none."""
        found = _SHAPE_LINE.search(source)
        if found is None:
            raise ValueError(f"lua/{name}.lua states no '-- shape: KEYS n, ARGV m' line")
        keys_fixed, keys_group, args_fixed, args_group = found.groups()
        return cls(
            keys=Count(int(keys_fixed), int(keys_group or 0)),
            args=Count(int(args_fixed), int(args_group or 0)),
        )

    def __str__(self) -> str:
        return f"KEYS {self.keys}, ARGV {self.args}"


def _preludes(source: str) -> list[str]:
    """The shared files a script's header says it uses, put in front of it after _checks."""
    found = _USES_LINE.search(source)
    return [] if found is None else [name.strip() for name in found.group(1).split(",")]


class LuaScript:
    """One script of `lua/NAME.lua`, callable on a client or queued on a pipeline."""

    def __init__(self, name: str) -> None:
        self.name = name
        own = _source_of(name)
        self.shape = Shape.of(name, own)
        self.source = _CHECKS + "".join(map(_source_of, _preludes(own))) + own
        self.sha = hashlib.sha1(self.source.encode()).hexdigest()
        SCRIPTS_BY_SHA[self.sha] = self

    def check(self, keys: Sequence[KeyOrArg], args: Sequence[KeyOrArg]) -> None:
        """Refuse a call that doesn't fit the script's shape (TypeError naming it)."""
        if not (self.shape.keys.fits(len(keys)) and self.shape.args.fits(len(args))):
            raise TypeError(
                f"lua/{self.name}.lua takes {self.shape}; called with "
                f"{len(keys)} keys and {len(args)} arguments"
            )

    def __call__(
        self,
        client: RedisClient | redis.RedisCluster,
        keys: Sequence[KeyOrArg],
        args: Sequence[KeyOrArg],
    ) -> Any:
        """Run the script on `client` and give its reply.

        On a `RedisCluster` the call goes to the node owning its keys' slot (one
        slot: redis-py refuses keys of several before sending), a reload after
        NOSCRIPT loads the script on every primary, and a call refused while the
        slot moves is sent again until it has (`slot_moves`).
        """
        self.check(keys, args)
        run = functools.partial(client.evalsha, self.sha, len(keys), *keys, *args)
        until = patience_from_now()
        try:
            return while_slot_moves(run, until=until)
        except NoScriptError:
            client.script_load(self.source)
            return while_slot_moves(run, until=until)

    async def run_async(
        self, client: AsyncRedisClient, keys: Sequence[KeyOrArg], args: Sequence[KeyOrArg]
    ) -> Any:
        """Run the script on an asyncio `client` and give its reply (on a cluster, as
        `__call__` does)."""
        self.check(keys, args)
        run = functools.partial(client.evalsha, self.sha, len(keys), *keys, *args)
        until = patience_from_now()
        try:
            return await while_slot_moves_async(run, until=until)
        except NoScriptError:
            await client.script_load(self.source)
            return await while_slot_moves_async(run, until=until)

    def queue(self, pipe: Pipeline, keys: Sequence[KeyOrArg], args: Sequence[KeyOrArg]) -> None:
        """Queue a run on `pipe`; `run_pipeline` then gives its reply."""
        self.check(keys, args)
        pipe.evalsha(self.sha, len(keys), *keys, *args)


#: Every script made, by SHA: what `run_pipeline` loads when Redis forgot one.
SCRIPTS_BY_SHA: dict[str, LuaScript] = {}


def run_pipeline(client: RedisClient, pipe: RedisPipeline) -> list[Any]:
    """Execute `pipe` (non-transactional); any script Redis had forgotten is loaded and re-run.

    Other command errors are raised, as `execute` would.  A WAIT ending the pipeline
    (see `replication`) is sent again with each script sent again, on its connection:
    then it covers that script's writes too.
    """
    commands = queued(pipe)
    replies: list[Any] = pipe.execute(raise_on_error=False)
    send_refused_again(client, commands, replies)
    wait = _final_wait(commands)
    for index, script, call in _forgotten(commands, replies):
        client.script_load(script.source)
        if wait is None:
            replies[index] = client.evalsha(*call)
        else:
            again = client.pipeline(transaction=False)
            replies[index], replies[-1] = again.evalsha(*call).execute_command(*wait).execute()
    return replies


#: One run of a script: its keys and its arguments.
Call = tuple[Sequence[KeyOrArg], Sequence[KeyOrArg]]


def run_paged(
    client: RedisClient, script: LuaScript, calls: Iterable[Call], *, page: int, counted: bytes
) -> int:
    """`script` run once per call, `page` runs pipelined per round trip: how many of them
    answered `counted` (a migration's per-entry moves, say)."""
    done, batch = 0, []
    for call in calls:
        batch.append(call)
        if len(batch) == page:
            done += _count_answers(client, script, batch, counted)
            batch = []
    return done + _count_answers(client, script, batch, counted)


def _count_answers(
    client: RedisClient, script: LuaScript, batch: list[Call], counted: bytes
) -> int:
    if not batch:
        return 0
    pipe = client.pipeline(transaction=False)
    for keys, args in batch:
        script.queue(pipe, keys, args)
    return sum(as_bytes(reply) == counted for reply in run_pipeline(client, pipe))


async def run_pipeline_async(client: AsyncRedisClient, pipe: AsyncRedisPipeline) -> list[Any]:
    """`run_pipeline` for an asyncio client and its pipeline."""
    commands = queued(pipe)
    replies: list[Any] = await pipe.execute(raise_on_error=False)
    await send_refused_again_async(client, commands, replies)
    wait = _final_wait(commands)
    for index, script, call in _forgotten(commands, replies):
        await client.script_load(script.source)
        if wait is None:
            replies[index] = await client.evalsha(*call)
        else:
            again = client.pipeline(transaction=False)
            again.evalsha(*call)
            again.execute_command(*wait)
            replies[index], replies[-1] = await again.execute()
    return replies


def queued(pipe: RedisPipeline | AsyncRedisPipeline) -> list[tuple[Any, Any]]:
    """The (args, options) of each command queued on `pipe`, in order.

    A cluster's pipeline keeps them with its execution strategy, and empties it
    when executed (redis-py 8.2 has no public accessor, for either client); a
    plain one in `command_stack`."""
    if isinstance(pipe, redis.cluster.ClusterPipeline):
        queue = pipe._execution_strategy.command_queue  # (private: see above)
        return [(command.args, command.options) for command in queue]
    if isinstance(pipe, redis.asyncio.cluster.ClusterPipeline):
        strategy = pipe._execution_strategy  # (private: see above)
        return [(command.args, command.kwargs) for command in strategy._command_queue]  # type: ignore[attr-defined]  # (the same)
    return list(pipe.command_stack)


def _final_wait(commands: Sequence[Any]) -> tuple[Any, ...] | None:
    """The WAIT command ending a pipeline's `commands`, if one does."""
    if not commands:
        return None
    args, _options = commands[-1]
    return tuple(args) if str(args[0]).upper() == "WAIT" else None


def _forgotten(
    commands: Sequence[Any], replies: Sequence[Any]
) -> Iterator[tuple[int, LuaScript, tuple[Any, ...]]]:
    """In order, each script Redis answered NOSCRIPT to: its index, the script, and the
    EVALSHA arguments to send again.  Another error is raised where it stands, so the
    scripts before it are re-run first, as they would have run."""
    for index, reply in enumerate(replies):
        if isinstance(reply, NoScriptError):
            args, _options = commands[index]  # (("EVALSHA", sha, numkeys, *keys_and_args), {})
            sha = args[1].decode() if isinstance(args[1], bytes) else args[1]
            yield index, SCRIPTS_BY_SHA[sha], (sha, *args[2:])
        elif isinstance(reply, Exception):
            raise reply


FETCH = LuaScript("fetch")
POP = LuaScript("pop")
SETTLE = LuaScript("settle")
ACK_MANY = LuaScript("ack_many")
RETRY_MANY = LuaScript("retry_many")
REQUEUE = LuaScript("requeue")
JUDGE_GONE = LuaScript("judge_gone")
MOVE_DUE = LuaScript("move_due")
BURY = LuaScript("bury")
BEAT = LuaScript("beat")
REQUEUE_ONE = LuaScript("requeue_one")
HANDOVER = LuaScript("handover")
PUSH_UNIQUE = LuaScript("push_unique")
RELEASE_LOCK = LuaScript("release_lock")
TAKE_LOCK = LuaScript("take_lock")
DEFER = LuaScript("defer")
SCHEDULE = LuaScript("schedule")
LIMIT_TAKE = LuaScript("limit_take")
LIMIT_RENEW = LuaScript("limit_renew")
PERIODIC_TICK = LuaScript("periodic_tick")
PERIODIC_ADVANCE = LuaScript("periodic_advance")
RENEW_LOCK = LuaScript("renew_lock")
PERIODIC_LOAD = LuaScript("periodic_load")
