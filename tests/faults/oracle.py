"""Reading the oracle file and checking Redis against it after a fault."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from pathlib import Path

import redis
from returns.pipeline import is_successful

from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.left_lists import left_lists
from cogworker.domain import payload


def runs(path: Path) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """Starts and ends per jid, as the oracle recorded them."""
    starts: collections.Counter[str] = collections.Counter()
    ends: collections.Counter[str] = collections.Counter()
    if path.exists():
        # A line still being appended may be read half-written: only whole lines count.
        whole = path.read_text().split("\n")[:-1]
        for line in whole:
            event, jid, _pid = line.split()
            (starts if event == "start" else ends)[jid] += 1
    return starts, ends


def places(client: redis.Redis) -> dict[str, list[str]]:
    """Where each job is: the queues, in-progress lists and sorted sets holding its jid."""
    found: dict[str, list[str]] = collections.defaultdict(list)
    for key in client.scan_iter(match=f"{keys.PREFIX}*", count=1000):
        name = key.decode()
        kind = client.type(key).decode()
        if kind == "list":
            entries = client.lrange(key, 0, -1)
        elif kind == "zset" and name.endswith(
            tuple(f"}}:{set_name}" for set_name in keys.SET_NAMES)
        ):
            entries = client.zrange(key, 0, -1)
        else:
            continue
        for entry in entries:
            found[_jid(entry)].append(name)
    return dict(found)


def _jid(entry: bytes) -> str:
    decoded = payload.decode(entry)
    return decoded.unwrap().jid if is_successful(decoded) else "?"


def assert_each_in_one_place(client: redis.Redis, jids: Iterable[str], done: set[str]) -> None:
    """A finished job is in no queue, list or set; any other is in exactly one."""
    where = places(client)
    for jid in jids:
        spots = where.get(jid, [])
        if jid in done:
            assert spots == [], f"{jid} finished, yet is still in {spots}"
        else:
            assert len(spots) == 1, f"{jid} should be in exactly one place, is in {spots}"


def finished(oracle: Path) -> set[str]:
    """The jobs the oracle saw end."""
    return {jid for jid, count in runs(oracle)[1].items() if count}


def assert_nothing_left_behind(client: redis.Redis) -> None:
    """After every worker has stopped: no process, in-progress, handover or orphan key remains."""
    leftovers = sorted(
        key.decode()
        for pattern in (
            "process:*",
            "workers:*",
            "memory:*",
            "inprogress:*",
            "{q:*}:inprogress:*",
            "{p:*}:queues",
            "{q:*}:orphanings:*",
        )
        for key in client.scan_iter(match=keys.PREFIX + pattern)
    )
    assert leftovers == [], f"keys left behind: {leftovers}"
    assert client.scard(keys.PROCESSES) == 0, "processes still registered"
    left = {
        f"{kept.name} of {kept.queue!r}": len(kept.entries)
        for kept in left_lists(client, keys.LEFT_LIST_NAMES)
    }
    assert left == {}, f"settlements never filed or parked jobs never buried: {left}"
