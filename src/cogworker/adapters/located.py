"""The jid index of each queue's scheduled, retry and dead sets: which set holds a job's
entry, and at what score, for the dashboard's "Go to jid" (#18 item 10).

`cogworker:{q:Q}:located` is a hash in Q's slot, jid -> "SET SCORE": the
set's name (`schedule`, `retry` or `dead`) and the entry's score, written
to 17 significant digits (they read back as the same double).  Every
script that files an entry in those sets or takes one off writes it in the
same step (`lua/_located.lua`): `settle` (retry, dead, and the dead set's
trimming), `bury`, `defer`, `schedule` (a scheduled push), `push_unique`
(a unique one), `move_due`, `cancel`, `dashboard_remove` (delete, kill)
and the migration's `move_entry` and `index_entry` (layout step 11 builds it
for the entries filed before).  So it names exactly what the sets hold,
with no TTL of its own: an entry's goes with the entry.  A jid filed twice
(a caller's jid reused while its first entry waits) is indexed at its last
filing.

A reader asks every queue's index in one pipelined round trip (`locations`,
an `HGET` each), then the one set it names for the entries of that exact
score (`at_score`: `ZRANGE ... BYSCORE`, O(log N) plus the entries sharing
the score, a page per call): plain commands, which a read-only dashboard
user may run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import attrs

from cogworker.adapters import pipelines
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes


@attrs.frozen(kw_only=True)
class Location:
    """Where an index says a jid's entry is: `queue`'s set `name`, at `score` (as stored)."""

    queue: str
    name: str
    score: str

    @property
    def sorted_set(self) -> str:
        """The set's key."""
        return keys.sorted_set(self.name, self.queue)


def value(name: str, score: float) -> str:
    """An index entry as the scripts write it (`located_value` in `lua/_located.lua`)."""
    return f"{name} {score:.17g}"


def parsed(queue: str, raw: bytes | str | None) -> Location | None:
    """The location an entry as stored says (None: none, or not one the scripts write)."""
    if raw is None:
        return None
    name, _, score = as_bytes(raw).decode(errors="replace").partition(" ")
    if name not in keys.SET_NAMES or not score:
        return None
    return Location(queue=queue, name=name, score=score)


def locations(client: RedisClient, jid: str, queues: Sequence[str]) -> list[Location]:
    """Where the index of each of `queues` says `jid`'s entry is (one `HGET` each, in one
    round trip), in the order of `queues`."""
    if not queues:
        return []
    pipe = pipelines.pipeline(client)
    for queue in queues:
        pipe.hget(keys.located(queue), jid)
    found = [parsed(queue, raw) for queue, raw in zip(queues, pipe.execute(), strict=True)]
    return [location for location in found if location is not None]


def at_score(
    client: RedisClient, location: Location, first: int, count: int, *, descending: bool
) -> list[tuple[bytes, float]]:
    """The entries of the location's set scored exactly its score, from the `first` of them
    on in walk order (`count` at most), each with its score: one `ZRANGE ... BYSCORE
    [REV] LIMIT` (Redis 6.2; the command the dashboard's read-only ACL user has)."""
    score = location.score
    found = client.zrange(
        location.sorted_set, score, score, desc=descending, byscore=True, offset=first,
        num=count, withscores=True,
    )  # fmt: skip
    return [
        (as_bytes(member), float(score))
        for member, score in cast("list[tuple[bytes, float]]", found)
    ]
