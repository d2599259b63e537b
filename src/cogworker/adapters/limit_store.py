"""Per-key limits on Redis (`domain.key_limits`): a place taken (limit_take.lua, or by
the fetch: `PlaceTerm`), renewed by the heartbeat (limit_renew.lua), let go of, and what
the dashboard shows of each key.

A limit's keys are in its job's queue's slot (`redis_keys.limit`), so the
settlement that ends a run lets its place go in the same script (settle.lua).
The global registry (`redis_keys.LIMITS`) lists the keys used lately; each
store writes an entry at most once a `REGISTER_EVERY`, in the same round trip
as a take (or its own, for a place the fetch took).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from cogworker.adapters import pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import RedisClient, RedisPipeline
from cogworker.adapters.replies import as_bytes
from cogworker.domain.key_limits import Claim, Concurrency, Limit, Rate, waiting_horizon

#: Seconds between two registrations of one limit key by one store.
REGISTER_EVERY = 60.0
#: Registry entries older than this are dropped (as a worker registers another).
REGISTRY_KEPT = 86_400.0
#: Most keys the dashboard shows (the latest used), and jids listed per key.
SHOWN_KEYS = 500
SHOWN_JIDS = 20


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


@attrs.frozen(kw_only=True)
class Spot:
    """A limit key on a queue, and its class's numbers when a worker last used it."""

    queue: str
    kind: str
    name: str
    key: str
    max: int
    per: float = 0.0
    #: Seconds a refused job counts as waiting since its last refusal (`waiting_horizon`).
    horizon: float = 0.0

    def holders_key(self) -> str:
        """Its sorted set of holders (or starts)."""
        return keys.limit(self.queue, self.kind, self.name, self.key)

    def waiting_key(self) -> str:
        """Its sorted set of jobs refused lately."""
        return keys.limit_waiting(self.queue, self.kind, self.name, self.key)


@attrs.frozen(kw_only=True)
class PlaceTerm:
    """A class whose jobs' concurrency places the fetch takes as it moves them (fetch.lua):
    the class as payloads name it, its limit's name and max, how long a place lasts
    unrenewed, and how long a refused job counts as waiting (`waiting_horizon`)."""

    class_name: str
    name: str
    max: int
    place_ttl: float
    horizon: float

    def arguments(self) -> tuple[str, str, int, int, int]:
        """Its group of the fetch script's arguments."""
        return self.class_name, self.name, self.max, _ms(self.place_ttl), _ms(self.horizon)


def place_term(class_name: str, limit: Limit, place_ttl: float) -> PlaceTerm | None:
    """What the fetch takes the places of `class_name`'s jobs by, under its `limit`; None
    for a rate limit (its start is counted as the job starts, not while it waits)."""
    if not isinstance(limit, Concurrency):
        return None
    return PlaceTerm(
        class_name=class_name,
        name=limit.name or class_name,
        max=limit.max,
        place_ttl=place_ttl,
        horizon=waiting_horizon(limit),
    )


@attrs.frozen(kw_only=True)
class Use:
    """What a limit key holds now: for the dashboard's Limits page."""

    spot: Spot
    #: When a worker last used it (unix time).
    used_at: float
    #: Concurrency: the jids running, with when their place runs out (unix time).
    holders: tuple[tuple[str, float], ...]
    #: Places taken: jobs running (concurrency) or starts in the last window (rate).
    used: int
    #: Jobs refused lately and not run since, and the first of their jids.
    waiting: int
    waiting_jids: tuple[str, ...]


def spot_of(queue: str, claim: Claim, limit: Limit) -> Spot:
    """Where `claim`, on `queue`, counts under its class's `limit`."""
    per = limit.per if isinstance(limit, Rate) else 0.0
    return Spot(
        queue=queue,
        kind=claim.kind,
        name=claim.name,
        key=claim.key,
        max=limit.max,
        per=per,
        horizon=waiting_horizon(limit),
    )


@attrs.define
class LimitStore:
    """Per-key limits on one Redis."""

    client: RedisClient
    #: When this store last registered each limit key (by its holders key).
    _registered: dict[str, float] = attrs.field(factory=dict, init=False)

    def take(self, spot: Spot, jid: str, place_ttl: float, now: float) -> tuple[bool, float]:
        """Take a place for `jid` under `spot` (a concurrency place lasts `place_ttl`
        unrenewed); (taken, seconds until a rate's window frees a place)."""
        span = place_ttl if spot.kind == "concurrency" else spot.per
        call = (
            (spot.holders_key(), spot.waiting_key()),
            (spot.kind, jid, spot.max, _ms(span), _ms(spot.horizon)),
        )
        if self.registered(spot.holders_key(), now):
            reply = scripts.LIMIT_TAKE(self.client, *call)
        else:
            pipe = pipelines.pipeline(self.client)
            _queue_registration(pipe, spot, now)
            scripts.LIMIT_TAKE.queue(pipe, *call)
            *_, reply = scripts.run_pipeline(self.client, pipe)
            self._registered[spot.holders_key()] = now
        return bool(int(reply[0])), int(reply[1]) / 1000

    def registered(self, holders: str, now: float) -> bool:
        """Whether this store registered the limit key `holders` within `REGISTER_EVERY`."""
        return self._registered.get(holders, 0.0) > now - REGISTER_EVERY

    def register(self, spot: Spot, now: float) -> None:
        """List `spot` in the registry (for a place the fetch took: no take to ride along)."""
        pipe = pipelines.pipeline(self.client)
        _queue_registration(pipe, spot, now)
        pipe.execute()
        self._registered[spot.holders_key()] = now

    def renew(self, held: Mapping[str, Sequence[str]], place_ttl: float) -> None:
        """Renew the places held (holders key → jids) for `place_ttl` from now, one round trip."""
        if not held:
            return
        pipe = pipelines.pipeline(self.client)
        for holders, jids in held.items():
            scripts.LIMIT_RENEW.queue(pipe, (holders,), (_ms(place_ttl), *jids))
        scripts.run_pipeline(self.client, pipe)

    def release(self, held: Mapping[str, Sequence[str]]) -> None:
        """Let go of places (holders key → jids) outside a settlement: their jobs won't run
        here after all.  One round trip."""
        pipe = pipelines.pipeline(self.client)
        for holders, jids in held.items():
            pipe.zrem(holders, *jids)
        pipe.execute()

    def uses(self) -> list[Use]:
        """Every limit key used lately, the latest first: its holders and waiting jobs."""
        seconds, micros = self.client.time()
        now = seconds + micros / 1e6
        entries: list[tuple[bytes, float]] = self.client.zrevrangebyscore(
            keys.LIMITS, "+inf", now - REGISTRY_KEPT, start=0, num=SHOWN_KEYS, withscores=True
        )  # type: ignore[assignment]  # redis-py's stubs don't know withscores' pairs
        latest: dict[tuple[str, str, str, str], tuple[Spot, float]] = {}
        for member, score in entries:
            spot = _spot_of(member)
            if spot is not None:
                latest.setdefault((spot.queue, spot.kind, spot.name, spot.key), (spot, score))
        spots = list(latest.values())
        pipe = pipelines.pipeline(self.client)
        for spot, _ in spots:
            _queue_reads(pipe, spot, now)
        replies = iter(pipe.execute())
        return [_use(spot, used_at, replies) for spot, used_at in spots]


def _queue_registration(pipe: RedisPipeline, spot: Spot, now: float) -> None:
    pipe.zadd(keys.LIMITS, {_entry(spot): now})
    pipe.zremrangebyscore(keys.LIMITS, "-inf", now - REGISTRY_KEPT)


def _queue_reads(pipe: RedisPipeline, spot: Spot, now: float) -> None:
    ms = now * 1000
    horizon = ms - spot.horizon * 1000
    if spot.kind == "concurrency":
        pipe.zrangebyscore(spot.holders_key(), f"({ms:.0f}", "+inf", withscores=True)
    else:
        pipe.zcount(spot.holders_key(), f"({ms - spot.per * 1000:.0f}", "+inf")
    pipe.zcount(spot.waiting_key(), f"({horizon:.0f}", "+inf")
    pipe.zrangebyscore(spot.waiting_key(), f"({horizon:.0f}", "+inf", start=0, num=SHOWN_JIDS)


def _use(spot: Spot, used_at: float, replies: Any) -> Use:
    held = next(replies)
    holders: tuple[tuple[str, float], ...] = ()
    if spot.kind == "concurrency":
        holders = tuple((_text(jid), score / 1000) for jid, score in held)
        used = len(holders)
    else:
        used = int(held)
    waiting = int(next(replies))
    jids = tuple(_text(jid) for jid in next(replies))
    return Use(
        spot=spot, used_at=used_at, holders=holders, used=used, waiting=waiting, waiting_jids=jids
    )


def _entry(spot: Spot) -> str:
    return json.dumps(attrs.asdict(spot), sort_keys=True, separators=(",", ":"))


def _spot_of(member: bytes) -> Spot | None:
    """A registry entry as a Spot; None for one this release can't read."""
    try:
        fields = json.loads(member)
        return Spot(**fields)
    except (ValueError, TypeError):
        return None


def _text(reply: bytes | str) -> str:
    return as_bytes(reply).decode(errors="replace")
