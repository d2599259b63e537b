"""The Lua scripts in `lua/`, run by SHA with a reload when Redis forgot them.

redis-py's own `Script` objects check `SCRIPT EXISTS` before every pipeline:
one more round trip per batch on the hottest paths.  Here a script is sent
by SHA and loaded only when Redis answers NOSCRIPT (after a restart or a
`SCRIPT FLUSH`).  A NOSCRIPT answer means the script did not run, so sending
it again can't apply it twice.  The same goes for redis.asyncio clients
(`run_async`, `run_pipeline_async`): what is sent is the same, only the
sending is awaited.  On a Redis Cluster (either client) a script runs on the
node owning its keys' slot, and the reload loads it on every primary (a
cluster's pipeline reloads in its own rounds, see `cluster_rounds`).

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
from collections.abc import Iterator, Sequence
from importlib import resources
from typing import Any

import attrs
import redis
import redis.asyncio
from redis.exceptions import NoScriptError

from cogworker.adapters import steps
from cogworker.adapters.command_values import AsyncCommands, Command, Commands
from cogworker.adapters.redis_client import (
    AsyncRedisClient,
    AsyncRedisPipeline,
    RedisClient,
    RedisPipeline,
)
from cogworker.adapters.script_shape import Shape
from cogworker.adapters.slot_moves import (
    patience_from_now,
    while_slot_moves,
    while_slot_moves_async,
)
from cogworker.adapters.steps import Steps

KeyOrArg = str | bytes | int | float
#: A pipeline of any client: scripts and commands are queued on all alike.
Pipeline = RedisPipeline | AsyncRedisPipeline


def _source_of(name: str) -> str:
    return resources.files("cogworker.adapters").joinpath(f"lua/{name}.lua").read_text()


_CHECKS = _source_of("_checks")
#: `-- uses: _a, _b`: the shared files of lua/ a script calls functions of.
_USES_LINE = re.compile(r"^-- uses: (.+)$", re.M)


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
        client: RedisClient,
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
    then it covers that script's writes too.  (What is sent again is decided once, by
    `pipeline_run`; this and `run_pipeline_async` only send it.)
    """
    return steps.driven(pipeline_run(queued(pipe)), functools.partial(_sent, client, pipe))


async def run_pipeline_async(client: AsyncRedisClient, pipe: AsyncRedisPipeline) -> list[Any]:
    """`run_pipeline` for an asyncio client and its pipeline."""
    perform = functools.partial(_sent_async, client, pipe)
    return await steps.driven_async(pipeline_run(queued(pipe)), perform)


@attrs.frozen
class Execute:
    """Send the pipeline: its replies, errors among them."""


@attrs.frozen
class Again:
    """Load `script`, then send `commands` on one connection: their replies (an error
    raised).  Only one server's pipelines need it: a cluster's reloads in its rounds."""

    script: LuaScript
    commands: list[Command]


def pipeline_run(commands: Sequence[Command]) -> Steps[Execute | Again, list[Any]]:
    """A pipeline of `commands` run: ends with its replies (see `run_pipeline`)."""
    replies = list((yield Execute()))
    wait = _final_wait(commands)
    for index, script in _forgotten(commands, replies):
        again = [commands[index]] if wait is None else [commands[index], commands[-1]]
        answers = yield Again(script, again)
        replies[index] = answers[0]
        if wait is not None:
            replies[-1] = answers[1]
    return replies


def _sent(client: RedisClient, pipe: RedisPipeline, step: Execute | Again) -> list[Any]:
    """Do `step` with a sync client."""
    if isinstance(step, Execute):
        return pipe.execute(raise_on_error=False)
    client.script_load(step.script.source)
    again = client.pipeline(transaction=False)  # (one server: see `Again`)
    for args, options in step.commands:
        again.execute_command(*args, **options)
    return again.execute()


async def _sent_async(
    client: AsyncRedisClient, pipe: AsyncRedisPipeline, step: Execute | Again
) -> list[Any]:
    """Do `step` with an asyncio client."""
    if isinstance(step, Execute):
        return await pipe.execute(raise_on_error=False)
    await client.script_load(step.script.source)
    again = client.pipeline(transaction=False)  # (one server: see `Again`)
    for args, options in step.commands:
        again.execute_command(*args, **options)
    return await again.execute()


def queued(pipe: RedisPipeline | AsyncRedisPipeline) -> list[Command]:
    """The (args, options) of each command queued on `pipe`, in order: a cluster's
    pipeline is those values (`command_values`), one server's keeps them in its
    `command_stack`."""
    if isinstance(pipe, Commands | AsyncCommands):
        return list(pipe.commands)
    if not isinstance(pipe, redis.client.Pipeline | redis.asyncio.client.Pipeline):
        # redis-py's own cluster pipeline keeps what it queued to itself
        raise TypeError(
            f"a {type(pipe).__name__} can't be run here: make a cluster's pipeline with "
            "cogworker.adapters.pipelines.pipeline(client)"
        )
    return list(pipe.command_stack)


def _final_wait(commands: Sequence[Command]) -> tuple[Any, ...] | None:
    """The WAIT command ending a pipeline's `commands`, if one does."""
    if not commands:
        return None
    args, _options = commands[-1]
    return tuple(args) if str(args[0]).upper() == "WAIT" else None


def _forgotten(
    commands: Sequence[Command], replies: Sequence[Any]
) -> Iterator[tuple[int, LuaScript]]:
    """In order, each script Redis answered NOSCRIPT to: its index and the script.  Another
    error is raised where it stands, so the scripts before it are re-run first, as they
    would have run."""
    for index, reply in enumerate(replies):
        if isinstance(reply, NoScriptError):
            yield index, script_of(commands[index])
        elif isinstance(reply, Exception):
            raise reply


def script_of(command: Command) -> LuaScript:
    """The script an EVALSHA `command` runs."""
    args, _options = command  # ("EVALSHA", sha, numkeys, *keys_and_args)
    sha = args[1].decode() if isinstance(args[1], bytes) else args[1]
    return SCRIPTS_BY_SHA[sha]


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
