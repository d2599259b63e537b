"""Moving hash slots between two primaries of a `LocalCluster`, as `redis-cli --cluster
reshard` does, with a hook in the middle of a slot's move.

A slot moves in redis-cli's steps (its `clusterManagerMoveSlot`): `CLUSTER SETSLOT S
IMPORTING source` on the target, `MIGRATING target` on the source, the slot's keys moved a
batch at a time (`CLUSTER GETKEYSINSLOT`, then one `MIGRATE ... KEYS` per batch), then
`SETSLOT S NODE target` on the target first, the source next, every other primary last.
Between the first batch and the end the slot is half-moved: the source answers a command
on a key it no longer has with ASK, and either node a script or multi-key command some of
whose keys it lacks with TRYAGAIN (cogworker's scripts name keys that need not exist: all
of a moving slot's are refused).  `midway(slot)` runs there, once per slot that held keys,
while the rest wait: a test holds a queue's slot half-moved until its workers met it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable

import attrs
import redis

from tests.support.redis_server import HOST, RedisServer

#: Keys per MIGRATE, as `redis-cli --cluster reshard`'s default `--cluster-pipeline`.
BATCH = 10
#: How long one MIGRATE may take (ms), as redis-cli's default `--cluster-timeout`.
MIGRATE_TIMEOUT_MS = 60_000


@attrs.frozen
class Primary:
    """A primary of the cluster: its server and its node id."""

    server: RedisServer
    node_id: str

    @classmethod
    def of(cls, server: RedisServer) -> Primary:
        """`server` with the id the cluster knows it by (`CLUSTER MYID`)."""
        with server.client() as client:
            return cls(server=server, node_id=_text(client.execute_command("CLUSTER", "MYID")))

    def slots(self) -> list[int]:
        """The slots this primary owns, by its own view, ascending."""
        with self.server.client() as client:
            ranges = client.execute_command("CLUSTER", "SLOTS")
        return sorted(
            slot
            for first, last, owner, *_replicas in ranges
            if int(owner[1]) == self.server.port
            for slot in range(int(first), int(last) + 1)
        )

    def keys_in(self, slot: int) -> int:
        """How many keys of `slot` this node holds."""
        with self.server.client() as client:
            return int(client.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot))

    def errors(self, kind: str) -> int:
        """How many error replies of `kind` (TRYAGAIN, ASK, MOVED) this node has sent."""
        with self.server.client() as client:
            stats = client.info("errorstats")
        found = stats.get(f"errorstat_{kind}", {})
        return int(found.get("count", 0)) if isinstance(found, dict) else 0


def primaries(servers: Iterable[RedisServer]) -> list[Primary]:
    """Each of `servers` with its node id."""
    return [Primary.of(server) for server in servers]


Midway = Callable[[int], None]


def reshard(
    source: Primary,
    target: Primary,
    others: Iterable[Primary],
    slots: Iterable[int],
    *,
    midway: Midway | None = None,
    batch: int = BATCH,
) -> None:
    """Move each of `slots` and its keys from `source` to `target`, in order (see the
    module's docstring), over one connection per node; `others` are told the new owner
    too.  `midway` runs in each slot holding keys, after its first batch moved."""
    with contextlib.ExitStack() as stack:
        source_client, target_client = (
            stack.enter_context(node.server.client()) for node in (source, target)
        )
        told = [stack.enter_context(other.server.client()) for other in others]
        for slot in slots:
            target_client.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source.node_id)
            source_client.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target.node_id)
            _migrate_keys(source_client, target.server.port, slot, midway, batch)
            for node in (target_client, source_client, *told):  # the target first
                node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target.node_id)


def move_slot(
    source: Primary,
    target: Primary,
    others: Iterable[Primary],
    slot: int,
    *,
    midway: Midway | None = None,
    batch: int = BATCH,
) -> None:
    """`reshard` of one slot."""
    reshard(source, target, others, [slot], midway=midway, batch=batch)


def _migrate_keys(
    source: redis.Redis, target_port: int, slot: int, midway: Midway | None, batch: int
) -> None:
    """MIGRATE `slot`'s keys from `source` to the node on `target_port`, `batch` at a time,
    calling `midway` after the first batch."""
    moved_any = False
    while names := source.execute_command("CLUSTER", "GETKEYSINSLOT", slot, batch):
        source.execute_command(
            "MIGRATE", HOST, target_port, "", 0, MIGRATE_TIMEOUT_MS, "KEYS", *names
        )
        if not moved_any and midway is not None:
            midway(slot)
        moved_any = True


def _text(reply: bytes | str) -> str:
    return reply.decode() if isinstance(reply, bytes) else reply
