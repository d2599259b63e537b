"""The Lua scripts in `lua/`, run by SHA with a reload when Redis forgot them.

redis-py's own `Script` objects check `SCRIPT EXISTS` before every pipeline:
one more round trip per batch on the hottest paths.  Here a script is sent
by SHA and loaded only when Redis answers NOSCRIPT (after a restart or a
`SCRIPT FLUSH`).  A NOSCRIPT answer means the script did not run, so sending
it again can't apply it twice.

Every script is sent with `lua/_checks.lua` in front of it: the argument
checks each one runs before its first write (Lua doesn't roll back).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from importlib import resources
from typing import Any

import redis
from redis.exceptions import NoScriptError

KeyOrArg = str | bytes | int | float


def _source_of(name: str) -> str:
    return resources.files("cogworker.adapters").joinpath(f"lua/{name}.lua").read_text()


_CHECKS = _source_of("_checks")


class LuaScript:
    """One script of `lua/NAME.lua`, callable on a client or queued on a pipeline."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.source = _CHECKS + _source_of(name)
        self.sha = hashlib.sha1(self.source.encode()).hexdigest()

    def __call__(
        self, client: redis.Redis, keys: Sequence[KeyOrArg], args: Sequence[KeyOrArg]
    ) -> Any:
        """Run the script on `client` and give its reply."""
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            client.script_load(self.source)
            return client.evalsha(self.sha, len(keys), *keys, *args)

    def queue(
        self, pipe: redis.client.Pipeline, keys: Sequence[KeyOrArg], args: Sequence[KeyOrArg]
    ) -> None:
        """Queue a run on `pipe`; `run_pipeline` then gives its reply."""
        pipe.evalsha(self.sha, len(keys), *keys, *args)


def run_pipeline(client: redis.Redis, pipe: redis.client.Pipeline) -> list[Any]:
    """Execute `pipe` (non-transactional); any script Redis had forgotten is loaded and re-run.

    Other command errors are raised, as `execute` would.
    """
    commands = list(pipe.command_stack)
    replies: list[Any] = pipe.execute(raise_on_error=False)
    for index, reply in enumerate(replies):
        if isinstance(reply, NoScriptError):
            replies[index] = _rerun(client, commands[index])
        elif isinstance(reply, Exception):
            raise reply
    return replies


def _rerun(client: redis.Redis, command: Any) -> Any:
    args, _options = command  # (("EVALSHA", sha, numkeys, *keys_and_args), {})
    sha = args[1].decode() if isinstance(args[1], bytes) else args[1]
    script = SCRIPTS_BY_SHA[sha]
    client.script_load(script.source)
    return client.evalsha(sha, *args[2:])


FETCH = LuaScript("fetch")
POP = LuaScript("pop")
SETTLE = LuaScript("settle")
ACK_MANY = LuaScript("ack_many")
REQUEUE = LuaScript("requeue")
MOVE_DUE = LuaScript("move_due")
BURY = LuaScript("bury")
BEAT = LuaScript("beat")
PUSH = LuaScript("push")
REQUEUE_ONE = LuaScript("requeue_one")
HANDOVER = LuaScript("handover")
PUSH_UNIQUE = LuaScript("push_unique")
RELEASE_LOCK = LuaScript("release_lock")
TAKE_LOCK = LuaScript("take_lock")
DEFER = LuaScript("defer")
PERIODIC_CLAIM = LuaScript("periodic_claim")
PERIODIC_LOAD = LuaScript("periodic_load")
SCRIPTS_BY_SHA = {
    script.sha: script
    for script in (
        FETCH,
        POP,
        SETTLE,
        ACK_MANY,
        REQUEUE,
        MOVE_DUE,
        BURY,
        BEAT,
        PUSH,
        REQUEUE_ONE,
        HANDOVER,
        PUSH_UNIQUE,
        RELEASE_LOCK,
        TAKE_LOCK,
        DEFER,
        PERIODIC_CLAIM,
        PERIODIC_LOAD,
    )
}
