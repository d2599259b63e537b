"""The periodic schedule in Redis: its entries as JSON, start-up changes, tick claims.

The schedule (`redis_keys.PERIODIC_SCHEDULE`) is a hash of name -> entry
JSON, read by every worker's periodic manager and by the dashboard.  Each
change is one script that first checks the entry (or the whole schedule)
is still what the caller read.  A tick is claimed in its run's queue's slot
(its claim key, taken once, with the run's locks and push), then its entry
moved on in the schedule's: processes side by side never handle a tick
twice.  The store decides nothing: which ticks to claim, and how, comes
from the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, cast, get_args

import attrs
import redis

from cogworker.adapters import jid_index, job_records, pipelines, scripts, tracking
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.flagged_reads import replies
from cogworker.adapters.periodic_entries import decode_entry as decode_entry
from cogworker.adapters.periodic_entries import encode_entry as encode_entry
from cogworker.adapters.redis_client import RedisClient, is_cluster
from cogworker.adapters.replies import as_bytes
from cogworker.adapters.scripts import LuaScript
from cogworker.domain import cron, payload
from cogworker.domain.cron import DROP, TickAction
from cogworker.domain.retries import LONGEST_DELAY

ClaimAction = TickAction | Literal["now"]
#: A claim that is no tick: a run enqueued outside the schedule (the dashboard's "Enqueue now").
NOW: ClaimAction = "now"

#: What `PeriodicStore.tick` can answer (see `lua/periodic_tick.lua`).
TickResult = Literal["enqueued", "skipped", "duplicate", "busy", "taken"]
TICK_RESULTS: tuple[str, ...] = get_args(TickResult)
#: What `PeriodicStore.claim` can answer: a tick's answers, "stale" (the entry changed since
#: the caller read it: read it again) and "dropped" (missed ticks marked as handled).
ClaimResult = TickResult | Literal["stale", "dropped"]

PERIODIC_RESTORE = LuaScript("periodic_restore")
#: What a tick's claim key holds when the tick enqueued no run (else the run's jid).
_CLAIMS_WITHOUT_RUN = ("skipped", "duplicate")

#: The shortest a tick's claim key is kept: it outlives any look that could still see the
#: tick as due; `Claim.claim_ttl` may keep it longer.
TICK_CLAIM_TTL = 600.0


def _milliseconds(seconds: float) -> int:
    """A TTL for Redis: at least a millisecond, at most `LONGEST_DELAY`."""
    return max(1, round(min(seconds, LONGEST_DELAY) * 1000))


@attrs.frozen(kw_only=True)
class Claim:
    """One tick to handle: the entry as read, what it becomes, and the run to enqueue."""

    name: str
    at: float
    action: ClaimAction
    #: The entry as the caller read it (the claim is refused if it changed).
    expected: bytes
    #: The entry to store if the run is enqueued, and if the tick is handled without one.
    if_enqueued: str
    otherwise: str
    queue: str = ""
    payload: str = ""
    jid: str = ""
    #: The running lock the run's payload names ("": the job's own in `queue`'s slot), and
    #: its TTL, seconds.
    running_lock: str = ""
    lock_ttl: float = 60.0
    #: The unique lock the run takes at enqueue ("" for none), and its TTL, seconds.
    unique_lock: str = ""
    unique_ttl: float = 0.0
    #: How long a tracked run's status is kept, seconds (0: the run isn't tracked).
    status_ttl: float = 0.0
    #: The time the status is stamped with.
    now: float = 0.0
    #: How long the tick's claim is kept, seconds (at least `TICK_CLAIM_TTL`): as long as
    #: the tick could still come due (`cron.last_due`), so that a crash between the claim
    #: and the entry's advance can't let a later look run the tick again.
    claim_ttl: float = TICK_CLAIM_TTL


@attrs.frozen(kw_only=True)
class Restored:
    """What `PeriodicStore.restore` found and did."""

    #: Whether this call found the epoch missing (the first to notice a loss of data).
    created: bool
    #: The epoch stored now.
    epoch: str
    #: How many entries it put back.
    added: int


@attrs.define
class PeriodicStore:
    """The periodic schedule on one Redis."""

    client: RedisClient

    def schedule(self) -> dict[str, bytes]:
        """Every entry as stored: name -> entry JSON."""
        stored = self.client.hgetall(keys.PERIODIC_SCHEDULE)
        return {as_bytes(name).decode(): as_bytes(raw) for name, raw in stored.items()}

    def schedule_and_epoch(self) -> tuple[dict[str, bytes], str | None]:
        """Every entry as stored, and the schedule's epoch (None: missing), in one round trip."""
        pipe = pipelines.pipeline(self.client)
        pipe.hgetall(keys.PERIODIC_SCHEDULE)
        pipe.get(keys.PERIODIC_EPOCH)
        stored, epoch = pipe.execute()
        schedule = {as_bytes(name).decode(): as_bytes(raw) for name, raw in stored.items()}
        return schedule, None if epoch is None else as_bytes(epoch).decode()

    def epoch(self) -> str | None:
        """The schedule's epoch (see `restore`), or None: missing."""
        epoch = self.client.get(keys.PERIODIC_EPOCH)
        return None if epoch is None else as_bytes(epoch).decode()

    def restore(self, token: str, entries: Mapping[str, str]) -> Restored:
        """Add `entries` where their name is missing, and the epoch (`token`) if it is missing
        (see `lua/periodic_restore.lua`)."""
        args: list[str] = [token]
        for name, text in entries.items():
            args += [name, text]
        created, epoch, added = PERIODIC_RESTORE(
            self.client, (keys.PERIODIC_SCHEDULE, keys.PERIODIC_EPOCH), args
        )
        return Restored(created=bool(created), epoch=as_bytes(epoch).decode(), added=int(added))

    def remove(self, names: Sequence[str]) -> list[str]:
        """Take the entries `names` off the schedule, by hand (their runs in flight go on);
        those that were there.  A process whose config lists one adds it back at its start."""
        pipe = pipelines.pipeline(self.client)
        for name in names:
            pipe.hdel(keys.PERIODIC_SCHEDULE, name)
        return [name for name, removed in zip(names, pipe.execute(), strict=True) if removed]

    def run_id(self) -> str | None:
        """The Redis server's run id (new at every start), or None if it can't be read."""
        try:
            if is_cluster(self.client):  # the node holding the schedule's slot
                node = self.client.get_node_from_key(keys.PERIODIC_SCHEDULE)  # type: ignore[no-untyped-call]
                return str(self.client.info("server", target_nodes=node).get("run_id")) or None
            return str(self.client.info("server").get("run_id")) or None
        except redis.ResponseError:  # INFO refused (an ACL without it, a managed service)
            return None

    def change(
        self, read: Mapping[str, bytes], writes: Mapping[str, str], deletes: Iterable[str]
    ) -> bool:
        """Write and delete entries if the schedule is still exactly `read`; whether it was."""
        gone = list(deletes)
        if not writes and not gone:
            return True
        args: list[str | bytes] = [str(len(read))]
        for name, raw in read.items():
            args += [name, raw]
        args.append(str(len(writes)))
        for name, text in writes.items():
            args += [name, text]
        args += gone
        return bool(scripts.PERIODIC_LOAD(self.client, (keys.PERIODIC_SCHEDULE,), args))

    def claim(self, claim: Claim) -> ClaimResult:
        """Handle one tick: how it went (docs/redis-cluster.md, "Periodic ticks").

        A tick is tried only while its entry is still what the caller read
        ("stale" otherwise, nothing written: a process that read the schedule
        long ago, or an entry a start-up rewrote or removed, enqueues nothing).
        Then `tick` in the run's queue's slot, the one claim of the tick, and
        `advance` of the entry to what the tick's result says.  A crash between
        the two leaves the entry behind: the next process to try the tick finds
        it "taken" and moves the entry on.  "taken" with the entry moved on by
        someone else meanwhile is "stale": read it again.  A drop of missed
        ticks is only the advance; a run outside the schedule ("now") only the
        tick, with no claim.
        """
        if claim.action == DROP:
            advanced = self.advance(claim.name, claim.expected, claim.otherwise)
            return "dropped" if advanced else "stale"
        if claim.action != NOW and self.entry(claim.name) != claim.expected:
            return "stale"
        result = self.tick(claim)
        if claim.action == NOW or result == "busy":
            return result
        stored = claim.if_enqueued if result == "enqueued" else claim.otherwise
        if result == "taken":
            stored = self._taken_entry(claim)
        if not self.advance(claim.name, claim.expected, stored) and result == "taken":
            return "stale"
        return result

    def _taken_entry(self, claim: Claim) -> str:
        """The entry once another process's claim handled the tick: with the run that claim
        enqueued, if it did.  Its claimer may not have advanced the entry yet (or never will,
        having crashed): whoever advances first stores the run, so the last run never lags."""
        holder = self.client.get(keys.periodic_tick(claim.queue, claim.name, claim.at))
        handled = decode_entry(claim.otherwise)
        if holder is None or handled is None:
            return claim.otherwise
        jid = as_bytes(holder).decode()
        if jid in _CLAIMS_WITHOUT_RUN:
            return claim.otherwise
        return encode_entry(cron.ran_at(handled, claim.at, jid))

    def entry(self, name: str) -> bytes | None:
        """One entry as stored, or None."""
        raw = self.client.hget(keys.PERIODIC_SCHEDULE, name)
        return None if raw is None else as_bytes(raw)

    def tick(self, claim: Claim) -> TickResult:
        """Claim one tick and enqueue its run, in the run's queue's slot (see
        `lua/periodic_tick.lua`): how it went.  The schedule is neither read nor changed.

        The run's queue is registered right after (see `lua/move_due.lua`); a tracked run's
        jid index entry is written before (`adapters.job_records`), whether the tick
        enqueues it or not (an entry naming a queue without its records reads as none).
        """
        tracked = bool(claim.status_ttl and claim.jid)
        pipe = pipelines.pipeline(self.client)
        indexed = jid_index.queue_indexes(
            pipe, [job_records.index(claim.jid, claim.queue, [claim.status_ttl if tracked else 0])]
        )
        placeholder = keys.no_lock(claim.queue)
        scripts.PERIODIC_TICK.queue(
            pipe,
            (
                keys.periodic_tick(claim.queue, claim.name, claim.at),
                claim.running_lock or keys.periodic_running(claim.queue, claim.name),
                keys.queue(claim.queue) if claim.queue else placeholder,
                claim.unique_lock or placeholder,
                keys.status(claim.queue, claim.jid) if tracked else placeholder,
            ),
            (
                claim.action,
                claim.payload,
                claim.jid,
                _milliseconds(claim.lock_ttl),
                _milliseconds(max(TICK_CLAIM_TTL, claim.claim_ttl)),
                _milliseconds(claim.unique_ttl) if claim.unique_lock else 0,
                max(1, round(min(claim.status_ttl, LONGEST_DELAY))) if claim.status_ttl else 0,
                repr(claim.now),
            ),
        )
        if claim.queue:
            pipe.sadd(keys.QUEUES, claim.queue)
        result = as_bytes(scripts.run_pipeline(self.client, pipe)[indexed]).decode()
        if result not in TICK_RESULTS:
            raise ValueError(f"periodic_tick answered {result!r}")
        return cast("TickResult", result)

    def advance(self, name: str, expected: bytes, entry: str) -> bool:
        """Store `entry` as `name`'s if its entry is still `expected`; whether it was (see
        `lua/periodic_advance.lua`)."""
        args = (name, expected, entry)
        return bool(scripts.PERIODIC_ADVANCE(self.client, (keys.PERIODIC_SCHEDULE,), args))

    def taken_by_a_worker(self, queue: str, jid: str) -> bool:
        """Whether a worker took the job `jid` off `queue`: in a process's in-progress list
        (reliable fetch), or running as a process's last heartbeat said (basic fetch)."""
        identities = [as_bytes(name).decode() for name in self.client.smembers(keys.PROCESSES)]
        pipe = pipelines.pipeline(self.client)
        for identity in identities:
            pipe.lrange(keys.in_progress(queue, identity), 0, -1)
        lists = [reply for reply in replies(pipe) if isinstance(reply, list)]  # not WRONGTYPE
        taken = {payload.decode(entry).map(lambda job: job.jid).value_or(None)
                 for entries in lists for entry in entries}  # fmt: skip
        if jid in taken:
            return True
        running = tracking.running_work(self.client, identities).values()
        return any(work.get("jid") == jid for threads in running for work in threads.values())

    def running(self, queue: str, name: str) -> str | None:
        """The jid holding the running lock of a periodic job (whose runs go to `queue`), or
        None."""
        value = self.client.get(keys.periodic_running(queue, name))
        return None if value is None else as_bytes(value).decode()
