"""The dashboard's view of the worker processes: their heartbeats, what they run now, their
memory over the day, and the quiet / resume / stop signals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from cogworker.adapters import pipelines, tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.flagged_reads import Flags, replies
from cogworker.adapters.process_registry import ProcessRegistry, Signal
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.domain import memory


@attrs.frozen(kw_only=True)
class ProcessInfo:
    """A registered process: its heartbeat hash (decoded) and how many threads are busy."""

    identity: str
    fields: dict[str, str]
    busy: int
    #: Its keys that can't be read (their part is left empty).
    problems: tuple[str, ...] = ()


def _text(value: bytes | str) -> str:
    return as_bytes(value).decode("utf-8", "backslashreplace")


def _info(identity: str, fields: object, busy: object) -> ProcessInfo:
    flags = Flags()
    heartbeat = flags.checked(keys.process(identity), fields, "hash") or {}
    return ProcessInfo(
        identity=identity,
        fields={_text(k): _text(v) for k, v in heartbeat.items()},
        busy=flags.checked(keys.workers(identity), busy, "hash") or 0,
        problems=tuple(flags.problems),
    )


@attrs.define
class ProcessStore:
    """The worker processes registered on one Redis."""

    client: RedisClient
    registry: ProcessRegistry

    def identities(self) -> list[str]:
        """Every registered process, by identity."""
        return self.registry.identities()

    def infos(self) -> list[ProcessInfo]:
        """Every registered process with its heartbeat fields, by identity."""
        identities = self.identities()
        pipe = pipelines.pipeline(self.client)
        for identity in identities:
            pipe.hgetall(keys.process(identity))
            pipe.hlen(keys.workers(identity))
        found = replies(pipe)
        pairs = zip(identities, found[::2], found[1::2], strict=True)
        return [_info(identity, fields, busy) for identity, fields, busy in pairs]

    def running_work(self, identities: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
        """Per process, what each of its threads runs now (see `tracking.running_work`)."""
        return tracking.running_work(self.client, identities)

    def memory(self, identities: Sequence[str], now: float) -> dict[str, tuple[memory.Sample, ...]]:
        """Per process, its 96 fifteen-minute RSS slots, oldest first."""
        return tracking.memory_series(self.client, identities, now)

    def signal(self, identity: str, signal: Signal) -> bool:
        """Ask a registered process to quiet, resume or stop; False if it isn't registered."""
        if not self.client.sismember(keys.PROCESSES, identity):
            return False
        self.registry.send(identity, signal)
        return True
