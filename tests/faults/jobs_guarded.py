"""Jobs and configs for issue 16 #14, #18 and #23: async performs, middleware-decoded
arguments, a worker that imports job classes only from its allowed modules, and
pushing a job by its class name alone."""

from __future__ import annotations

import base64
import json

import attrs

import cogworker
from cogworker.app.job_record import new_jid
from tests.faults.jobs import config, note, side_effects


def push_named(client: cogworker.Client, class_name: str, **fields: object) -> str:
    """Push a job naming `class_name` (no class object needed), with no retries."""
    record = cogworker.JobRecord(
        class_name=class_name, queue="default", jid=new_jid(), retry=False, **fields
    )
    jid = client.push(record)
    assert jid is not None
    return jid


class ReturnsCoroutine(cogworker.Job, retry=False):
    """A plain perform that hands back a coroutine (an async helper it forgot to await)."""

    async def _work(self) -> None:
        note("body", self.jid)

    def perform(self) -> None:
        """Return the un-awaited coroutine."""
        note("start", self.jid)
        return self._work()  # type: ignore[return-value]  # the very mistake under test


class RecordsArgs(cogworker.Job, retry=False):
    """Records the arguments it ran with in the test's Redis."""

    def perform(self, *args: object) -> None:
        """RPUSH the arguments as JSON to `ran-with:JID`."""
        note("start", self.jid)
        side_effects().rpush(f"ran-with:{self.jid}", json.dumps(args))
        note("end", self.jid)


def encoded(*args: object) -> str:
    """Arguments as one opaque string (base64 of their JSON), as a client might send them."""
    return base64.b64encode(json.dumps(args).encode()).decode()


def decode_args(ctx: cogworker.RunContext, run: cogworker.CallNext) -> None:
    """A server middleware: a job whose one argument is `encoded(...)` runs with what it holds."""
    if ctx.job.extra.get("encoded") is True:
        run(args=json.loads(base64.b64decode(str(ctx.args[0]))))
    else:
        run()


def record_seen_args(ctx: cogworker.RunContext, run: cogworker.CallNext) -> None:
    """An older-style middleware inside: notes the arguments it sees and calls `run()`."""
    side_effects().rpush(f"seen:{ctx.job.jid}", json.dumps(ctx.args))
    run()


middleware_config = attrs.evolve(config, server_middleware=(decode_args, record_seen_args))
