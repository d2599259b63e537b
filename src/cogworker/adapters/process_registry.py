"""Worker processes in Redis: heartbeats, signals and presence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import attrs

from cogworker.adapters import pipelines, scripts
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.replies import as_bytes
from cogworker.domain import memory

Signal = str  # "quiet", "resume", "stop", or "cancel:JID"
Pair = tuple[str, str | int | float]
SIGNALS = ("quiet", "resume", "stop")
#: A signal to cancel one running job: this, then its jid.
CANCEL_PREFIX = "cancel:"


def cancel_signal(jid: str) -> Signal:
    """The signal telling a process to cancel its run of `jid`."""
    return CANCEL_PREFIX + jid


def cancelled_jid(signal: Signal) -> str | None:
    """The jid a cancel signal names; None for another signal."""
    return signal[len(CANCEL_PREFIX) :] if signal.startswith(CANCEL_PREFIX) else None


#: `judge_gone`'s answer: "suspect" is "not yet"; "gone" deleted the process's presence
#: keys now, "gone already" found none left (a verdict's caller crashed, say).
Verdict = Literal["alive", "suspect", "gone", "gone already"]
_VERDICTS: tuple[Verdict, ...] = ("alive", "suspect", "gone", "gone already")


@attrs.frozen
class BeatReply:
    """What a beat found: the signals waiting, and what tells whether the process was
    declared gone (`presence_taken`)."""

    signals: list[Signal]
    #: The process's heartbeat hash was there before the beat.
    found: bool
    #: A suspect mark was there (a verdict keeps it until the recovery's end).
    suspected: bool
    #: The process wasn't registered (a recovery's last step unregisters it).
    registered_anew: bool

    @property
    def presence_taken(self) -> bool:
        """Whether a recovery's verdict took this process's presence away: its hash gone
        with the mark still standing, or with the process unregistered.  A hash that only
        expired (Redis down or frozen past its TTL, no verdict) is not.  A process's very
        first beat also answers True: its caller knows it had never beaten."""
        return not self.found and (self.suspected or self.registered_anew)


@attrs.define
class ProcessRegistry:
    """Presence of worker processes on one Redis."""

    client: RedisClient

    def beat(
        self,
        identity: str,
        fields: Mapping[str, str | int | float],
        running: Mapping[str, str],
        ttl: int,
        now: float,
        *,
        held_locks: Sequence[tuple[str, str]] = (),
        lock_ttl: float = 60.0,
        queues: Sequence[str] = (),
        fetched_from: Sequence[str] = (),
    ) -> BeatReply:
        """Record one heartbeat (and its RSS, if `fields` has `rss_kb`): the waiting
        signals, and whether the process's hash was there (see `BeatReply`).

        `held_locks` are the (lock, jid) of the periodic runs this process is
        running: each is renewed for `lock_ttl` seconds while the jid holds it,
        by a `renew_lock` call in the same round trip, right after the beat (a
        lock lives in its run's queue's slot, the beat in the process's).
        The beat deletes the process's suspect mark (see `judge_gone`).  The
        RSS is recorded best-effort: if its history key can't be written, the
        beat still lands and the process hash's `memory_error` says why.

        The process is registered right after its script, and `queues` (those
        it serves), in the same round trip: a push that crashed between its
        script and its registration leaves a job on an unregistered queue, and
        the next beat of a process serving it registers it (docs/redis-cluster.md,
        "Registries").  `fetched_from`: the queues it fetches into in-progress lists
        from (reliable fetch), added to its set of them after the beat: a process
        fetches only once a beat has landed (`lease.py`), so none of its lists holds a
        job while the set lacks its queue for longer than a beat (a recovery removing
        them from a process that was declared gone but lives on, say).
        """
        pipe = pipelines.pipeline(self.client)
        scripts.BEAT.queue(
            pipe,
            (
                keys.suspect(identity),
                keys.process(identity),
                keys.workers(identity),
                keys.signal(identity),
                keys.memory_history(identity),
            ),
            (
                ttl,
                memory.slot_of(now),
                fields.get("rss_kb", ""),
                memory.first_slot(now),
                memory.KEY_TTL,
                *_counted_pairs(running.items()),
                *_flat(fields.items()),
            ),
        )
        pipe.sadd(keys.PROCESSES, identity)
        for lock, jid in held_locks:
            scripts.RENEW_LOCK.queue(pipe, (lock,), (jid, int(lock_ttl * 1000)))
        if queues:
            pipe.sadd(keys.QUEUES, *queues)
        if fetched_from:
            pipe.sadd(keys.process_queues(identity), *fetched_from)
        (found, suspected, signals), registered_anew = scripts.run_pipeline(self.client, pipe)[:2]
        return BeatReply(
            signals=[as_bytes(signal).decode() for signal in signals],
            found=bool(found),
            suspected=bool(suspected),
            registered_anew=bool(registered_anew),
        )

    def judge_gone(self, identity: str, threshold: float, mark_ttl: int) -> Verdict:
        """Whether `identity` is gone, by its own node's clock (see judge_gone.lua): its
        beat older than `threshold` marks it suspect, and a mark `threshold` old with no
        beat since is the verdict, which deletes its presence keys.  The mark lasts
        `mark_ttl` seconds unless a beat deletes it first."""
        reply = scripts.JUDGE_GONE(
            self.client,
            (
                keys.process(identity),
                keys.workers(identity),
                keys.memory_history(identity),
                keys.suspect(identity),
            ),
            (threshold, mark_ttl),
        )
        return _VERDICTS[int(reply)]

    def unregister(self, identity: str) -> None:
        """The last step of a recovery: a gone process leaves the registry, then its
        verdict's mark goes (else it expires)."""
        pipe = pipelines.pipeline(self.client)
        pipe.srem(keys.PROCESSES, identity)
        pipe.delete(keys.suspect(identity))
        pipe.execute()

    def send(self, identity: str, signal: Signal) -> None:
        """Ask a process to quiet, resume, stop or cancel a job at its next heartbeat."""
        if signal not in SIGNALS and not cancelled_jid(signal):
            raise ValueError(f"unknown signal {signal!r}; expected one of {SIGNALS} or a cancel")
        pipe = pipelines.pipeline(self.client)
        pipe.rpush(keys.signal(identity), signal)
        pipe.expire(keys.signal(identity), 60)
        pipe.execute()

    def identities(self) -> list[str]:
        """Every registered process, alive or not yet reconciled."""
        return sorted(as_bytes(member).decode() for member in self.client.smembers(keys.PROCESSES))

    def beats(self) -> tuple[dict[str, float | None], float]:
        """Every registered process's latest beat (None: its heartbeat hash is gone), and
        Redis's time now (the clock beats are stamped with), in one round trip.

        A process of an older release beats under the older layout's name: both
        names are read, and the later beat counts.
        """
        identities = self.identities()
        pipe = pipelines.pipeline(self.client)
        for identity in identities:
            pipe.hget(keys.process(identity), "beat")
            pipe.hget(keys.LEGACY_PROCESS_PREFIX + identity, "beat")
        # (by name: redis-py's cluster pipeline refused `time()`; its stubs leave it untyped)
        pipe.execute_command("TIME")  # type: ignore[no-untyped-call]
        *found, (seconds, micros) = pipe.execute()
        pairs = zip(found[::2], found[1::2], strict=True)
        beats = {
            identity: _latest(current, legacy)
            for identity, (current, legacy) in zip(identities, pairs, strict=True)
        }
        return beats, seconds + micros / 1_000_000

    def holders(self) -> dict[str, set[str]]:
        """Every identity with an in-progress list, registered or not, and the queues of
        its lists (a full key scan)."""
        found: dict[str, set[str]] = {}
        for key in self.client.scan_iter(match=keys.in_progress("*", "*"), count=1000):
            queue, identity = keys.in_progress_owner(as_bytes(key).decode())
            found.setdefault(identity, set()).add(queue)
        return found

    def fetched_from(self, identity: str) -> set[str]:
        """The queues `identity` has in-progress lists on (its set of them)."""
        members = self.client.smembers(keys.process_queues(identity))
        return {as_bytes(member).decode() for member in members}

    def remove(self, identity: str) -> None:
        """A clean exit: the process's presence keys go (its in-progress lists are empty by
        now, and go with the set naming their queues).

        Unregistered first, then a DEL per key, in one round trip but not one
        transaction: on Redis Cluster the keys live in different slots.  A
        reader in between sees a process that is gone, with keys that are
        going; a stop cut short leaves keys that expire (their TTL) or that
        recovery deletes.
        """
        lists = [keys.in_progress(queue, identity) for queue in self.fetched_from(identity)]
        pipe = pipelines.pipeline(self.client)
        pipe.srem(keys.PROCESSES, identity)
        for key in (
            keys.process(identity),
            keys.workers(identity),
            keys.memory_history(identity),
            keys.signal(identity),
            keys.suspect(identity),
            *lists,
            keys.process_queues(identity),
        ):
            pipe.delete(key)
        pipe.execute()


def _latest(*beats: bytes | None) -> float | None:
    """The latest of the beats found (None: none)."""
    found = [float(beat) for beat in beats if beat is not None]
    return max(found) if found else None


def _flat(pairs: Iterable[Pair]) -> list[str | int | float]:
    return [item for pair in pairs for item in pair]


def _counted_pairs(pairs: Iterable[Pair]) -> list[str | int | float]:
    """Pairs as the beat script reads a list of them: how many, then each flat."""
    flat = _flat(pairs)
    return [len(flat) // 2, *flat]
