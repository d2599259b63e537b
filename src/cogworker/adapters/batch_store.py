"""Batches on one Redis: a batch's state in its own slot `{b:BID}`, its members' final
outcomes as events in their queues' slots, and its callbacks pushed once.

Every script keeps to one slot (docs/redis-cluster.md):

* `batch_open`, `batch_join`, `batch_fold`, `batch_mark`: the batch's slot;
* the settling scripts (settle, cancel, bury) append a member's event in its
  queue's slot (`adapters/batch_events.py`);
* `batch_fire`: the callback's queue's slot, a marker named by the callback's
  fixed jid making a repeated push write nothing.

The fold (`app/batch_folding.py`) reads an event, folds it, pushes what is
due, notes it, and only then removes the event: a crash at any point leaves
the event to be folded again, and every step is idempotent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import attrs

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jid_index import JidIndex, queue_indexes
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript, run_pipeline
from cogworker.domain import batches
from cogworker.domain.batches import BatchStatus, Callback

BATCH_OPEN = LuaScript("batch_open")
BATCH_JOIN = LuaScript("batch_join")
BATCH_FOLD = LuaScript("batch_fold")
BATCH_MARK = LuaScript("batch_mark")
BATCH_FIRE = LuaScript("batch_fire")

#: How long a batch's keys (and its callbacks' markers) live while it isn't finished,
#: renewed by every event folded: a batch with no news for 30 days is dropped.
UNFINISHED_TTL = 30 * 24 * 3600
#: How long a finished batch's status stays readable.
FINISHED_TTL = 24 * 3600


@attrs.frozen(kw_only=True)
class Folded:
    """A batch's state after an event was folded, with its callbacks' payloads."""

    status: BatchStatus
    payloads: Mapping[Callback, str]


@attrs.define
class BatchStore:
    """Batches on one Redis."""

    client: RedisClient

    def open(
        self,
        bid: str,
        payloads: Mapping[Callback, str],
        now: float,
        indexes: Sequence[JidIndex] = (),
    ) -> bool:
        """Write a new batch with its callbacks' payloads, after the jid `indexes` of those
        keeping their results; False if `bid` exists already."""
        fields = [text for name, body in payloads.items() for text in (f"cb:{name}", body)]
        pipe = pipelines.pipeline(self.client)
        queue_indexes(pipe, indexes)
        BATCH_OPEN.queue(pipe, (keys.batch(bid),), (UNFINISHED_TTL, now, *fields))
        opened = run_pipeline(self.client, pipe)[-1]
        if opened:
            self.client.zadd(keys.BATCHES, {bid: now})
        return bool(opened)

    def join(self, bid: str, jids: Sequence[str]) -> int:
        """Register `jids` as members before they are pushed: 1, or 0 if the batch is
        closed, -1 if there is no such batch."""
        call_keys = (keys.batch(bid), keys.batch_members(bid))
        return int(BATCH_JOIN(self.client, call_keys, (UNFINISHED_TTL, *jids)))

    def leave(self, bid: str, jids: Sequence[str]) -> None:
        """Take back members whose push didn't happen (stopped, or failed)."""
        self.client.srem(keys.batch_members(bid), *jids)

    def close(self, bid: str, queue: str) -> None:
        """Append the batch's closing to `queue`'s events: folding it takes the count."""
        self.client.rpush(keys.batch_events(queue), batches.event(bid, "-", "close"))

    def status(self, bid: str) -> BatchStatus | None:
        """A batch's status, or None if there is no such batch (or it has expired)."""
        fields = self.client.hgetall(keys.batch(bid))
        return BatchStatus.from_fields(bid, _texts(fields)) if fields else None

    def fold(self, event: batches.BatchEvent) -> Folded | None:
        """Fold `event` into its batch; the batch's state after it (None: no such batch)."""
        bid = event.bid
        reply = BATCH_FOLD(self.client, _batch_keys(bid), (event.jid, event.final, UNFINISHED_TTL))
        if not reply:
            return None
        fields = _texts(dict(zip(reply[::2], reply[1::2], strict=True)))
        payloads = {c: fields[f"cb:{c}"] for c in batches.CALLBACKS if f"cb:{c}" in fields}
        return Folded(status=BatchStatus.from_fields(bid, fields), payloads=payloads)

    def fire(self, queue: str, jid: str, body: str) -> bool:
        """Push a callback's payload onto `queue` unless it was pushed before; True if this
        call pushed it.  The queue is registered after, as a push registers it."""
        pipe = pipelines.pipeline(self.client)
        BATCH_FIRE.queue(
            pipe, (keys.batch_callback_mark(queue, jid), keys.queue(queue)), (body, UNFINISHED_TTL)
        )
        pipe.sadd(keys.QUEUES, queue)
        pushed, _ = run_pipeline(self.client, pipe)
        return bool(pushed)

    def mark(self, bid: str, fired: Callback | None, finished: bool) -> None:
        """Note that `fired` was pushed, and whether the batch is finished (its keys then
        expire after FINISHED_TTL)."""
        call_args = (fired or "", "1" if finished else "0", FINISHED_TTL)
        BATCH_MARK(self.client, _batch_keys(bid), call_args)

    def events(self, queue: str, most: int) -> list[bytes]:
        """The oldest `most` events waiting on `queue`."""
        return [as_bytes(e) for e in self.client.lrange(keys.batch_events(queue), 0, most - 1)]

    def done(self, queue: str, event: bytes) -> None:
        """Remove one folded event (a copy another process folded is removed by it)."""
        self.client.lrem(keys.batch_events(queue), 1, event)  # type: ignore[arg-type]  # bytes are fine

    def listed(self, most: int) -> list[BatchStatus]:
        """The newest `most` batches still held, newest first; expired ones are dropped
        from the index as they are met."""
        newest = self.client.zrange(keys.BATCHES, 0, most - 1, desc=True)
        bids = [as_bytes(cast("bytes", b)).decode() for b in newest]
        found: list[BatchStatus] = []
        for bid in bids:
            status = self.status(bid)
            if status is None:
                self.client.zrem(keys.BATCHES, bid)
            else:
                found.append(status)
        return found


def _batch_keys(bid: str) -> tuple[str, str, str]:
    return keys.batch(bid), keys.batch_members(bid), keys.batch_settled(bid)


def _texts(fields: Mapping[bytes | str, bytes | str]) -> dict[str, str]:
    return {as_bytes(k).decode(): as_bytes(v).decode() for k, v in fields.items()}
