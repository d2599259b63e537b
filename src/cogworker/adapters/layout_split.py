"""A layout step's splits on one Redis (`domain.layout_splits.Split`): the members of an
old sorted set, or the entries of an old list, each moved to its queue's by one script
(`lua/move_entry.lua`), after its queue is added to the split's owner set if it has one
(a process's set of the queues of its in-progress lists, layout step 10).

Members are read from the set's (or list's) start a page at a time: every one read is
moved (or was moved meanwhile), so the next page starts at the start again, and the split
ends when the key is gone.  Each move's queue is registered in `cogworker:parts` in the same
pipeline, before it (a merged read never misses a moved entry); a run cut short
anywhere is finished by running it again.
"""

from __future__ import annotations

from typing import cast

import attrs

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_store import KeyReport
from cogworker.adapters.redis_client import RedisClient, RedisPipeline
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript, run_pipeline
from cogworker.domain.layout_splits import Split, queue_named

MOVE_ENTRY = LuaScript("move_entry")
#: Members read per round trip, and moves sent per pipeline.
PAGE = 500


@attrs.frozen(kw_only=True)
class EntryMove:
    """One member of a split's old set to move, and the queue whose set it goes to."""

    split: Split
    member: bytes

    @property
    def queue(self) -> str:
        """The queue whose set it goes to ("": the part of the empty queue name)."""
        return queue_named(self.member)


def moves(client: RedisClient, split: Split) -> list[EntryMove]:
    """The first `PAGE` entries of the split's old key (none if it isn't of its kind)."""
    if as_bytes(client.type(split.old)).decode() != split.kind:
        return []
    read = client.zrange if split.kind == "zset" else client.lrange
    members = cast("list[bytes]", read(split.old, 0, PAGE - 1))
    return [EntryMove(split=split, member=as_bytes(member)) for member in members]


def move_entry(client: RedisClient, move: EntryMove) -> bool:
    """Move one entry (its queue registered first); True if this call did."""
    pipe = pipelines.pipeline(client)
    _queue_moves(pipe, [move])
    return as_bytes(run_pipeline(client, pipe)[-1]) == b"moved"


def split_all(client: RedisClient, split: Split) -> int:
    """Every entry of the split's old key moved: how many this call did (a page's
    registrations and moves pipelined per round trip)."""
    done = 0
    while page := moves(client, split):
        pipe = pipelines.pipeline(client)
        _queue_moves(pipe, page)
        replies = run_pipeline(client, pipe)
        done += sum(isinstance(r, bytes | str) and as_bytes(r) == b"moved" for r in replies)
    return done


def _queue_moves(pipe: RedisPipeline, page: list[EntryMove]) -> None:
    queues = sorted({move.queue for move in page} - {""})
    if queues:  # the part of the empty queue name is read without it
        pipe.sadd(keys.PARTS, *queues)
    for move in page:
        if move.split.owner is not None:  # its process's set names the list's queue first
            pipe.sadd(move.split.owner, move.queue)
        target = move.split.target(move.member)
        # A sorted set's entry is noted in its queue's jid index of the sets; a list's
        # move names the list again (unused).
        located = keys.located_of(target) if move.split.kind == "zset" else target
        MOVE_ENTRY.queue(pipe, (move.split.old, target, located), (move.member, move.split.kind))


def report(client: RedisClient, split: Split) -> KeyReport:
    """The split as a dry run shows it: its old key's type and entries, where they go."""
    kind = as_bytes(client.type(split.old)).decode()
    count = client.zcard if split.kind == "zset" else client.llen
    entries = int(count(split.old)) if kind == split.kind else 0
    return KeyReport(old=split.old, new=split.new, kind=kind if entries else "none",
                     entries=entries)  # fmt: skip
