"""A settlement's write as a value: the one place that knows each script's layout.

`write_of` turns a settle order into an `EntryWrite` (no I/O): the script that writes
it, the keys and arguments every entry of a call shares (its list, its queue's
counters, the retention), and its own.  A plain ack is an entry of ack_many.lua, a
plain retry one of retry_many.lua (`OutcomeRecord.is_plain_ack`, `is_plain_retry`:
their counters, class history trims and metrics are written once per call), every
other outcome a settle.lua call of its own (`settle_call`; see the scripts' headers).

`calls_of` joins the entries sharing a script and its shared part into one
`ScriptCall` by concatenating their own parts: grouping a batch's plain acks and
retries into one call per queue knows nothing of the layout.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import attrs

from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.adapters.batch_events import event_target
from cogworker.adapters.jobs.retention import DAY_COUNTER_TTL, Retention
from cogworker.adapters.jobs.run_figures import metrics_args, metrics_keys
from cogworker.adapters.jobs.settle_order import SettleOrder
from cogworker.adapters.redis_client import RedisClient, RedisPipeline
from cogworker.adapters.results import result_args, result_key
from cogworker.adapters.scripts import LuaScript
from cogworker.domain.stats import day_of

ScriptArgs = tuple[bytes | str | int | float, ...]
#: The counter of an end that isn't a success or a failure (a failure counts in `failed`).
_COUNTERS = {"cancel": "cancelled", "expire": "expired"}
#: The scripts taking many entries per call; settle.lua takes one.
_JOINABLE = (scripts.ACK_MANY, scripts.RETRY_MANY)


@attrs.frozen(kw_only=True)
class Placement:
    """Where and when settlements are written: taken off the list `holder` (checked only
    when `owned`) at `now`, kept as `retention` says; `refreshes` are the (queue, class)
    pairs whose lasting metrics are due for a refresh."""

    holder: str
    owned: bool
    now: float
    retention: Retention
    refreshes: Collection[tuple[str, str]] = ()


@attrs.frozen
class ScriptCall:
    """One script run: its keys and arguments."""

    script: LuaScript
    keys: tuple[str, ...]
    args: ScriptArgs

    def run(self, client: RedisClient) -> Any:
        """Run it on `client`: its reply."""
        return self.script(client, self.keys, self.args)

    def queue(self, pipe: RedisPipeline) -> None:
        """Queue it on `pipe`."""
        self.script.queue(pipe, self.keys, self.args)


@attrs.frozen
class EntryWrite:
    """One settlement's part of a script call: what every entry of the call shares
    (`shared`, a ScriptCall of its own) and its own keys and arguments."""

    shared: ScriptCall
    keys: tuple[str, ...] = ()
    args: ScriptArgs = ()


def write_of(order: SettleOrder, at: Placement) -> EntryWrite:
    """The write of `order` placed `at` (see the module)."""
    outcome = order.outcome
    if outcome.is_plain_ack:
        return _ack(order, at)
    if outcome.is_plain_retry:
        return _retry(order, at)
    return EntryWrite(settle_call(order, at))


def calls_of(writes: Sequence[EntryWrite]) -> list[tuple[ScriptCall, list[int]]]:
    """The calls writing `writes`, each with the indexes of the writes it answers for
    (one reply each, in order): the entries of a joinable script sharing their shared
    part joined, in order of their first, then every other call, in order."""
    joined: dict[ScriptCall, list[int]] = {}
    alone: list[tuple[ScriptCall, list[int]]] = []
    for i, write in enumerate(writes):
        if write.shared.script in _JOINABLE:
            joined.setdefault(write.shared, []).append(i)
        else:
            alone.append((write.shared, [i]))
    calls = [(_joined(shared, [writes[i] for i in at]), at) for shared, at in joined.items()]
    return calls + alone


def _joined(shared: ScriptCall, writes: Sequence[EntryWrite]) -> ScriptCall:
    entry_keys = tuple(key for write in writes for key in write.keys)
    entry_args = tuple(arg for write in writes for arg in write.args)
    return attrs.evolve(shared, keys=shared.keys + entry_keys, args=shared.args + entry_args)


def _owned(at: Placement) -> str:
    return "1" if at.owned else "0"


def _ack(order: SettleOrder, at: Placement) -> EntryWrite:
    """A plain ack's entry of ack_many.lua."""
    queue, outcome, kept, now = order.fetched.queue, order.outcome, at.retention, at.now
    day = day_of(now)
    shared_keys = (at.holder, keys.stat(queue, "processed"), keys.stat(queue, "processed", day))
    shared_args = (
        _owned(at), DAY_COUNTER_TTL, kept.history_per_class, int(kept.history_ttl), now,
        int(kept.metrics_ttl), kept.history_per_job, int(kept.status_ttl),
    )  # fmt: skip
    unused = keys.no_lock(queue)
    own_history = outcome.history_per_job and outcome.history != ""
    releases = outcome.unique_action == "release"
    entry_keys = (
        keys.orphanings(queue, outcome.jid),
        keys.handbacks(queue, outcome.jid),
        keys.class_history(queue, outcome.class_name),
        *metrics_keys(outcome.class_name, outcome.sample, now, queue),
        result_key(outcome.jid, outcome.result, queue),
        outcome.limit_place or unused,
        keys.history(queue, outcome.jid) if own_history else unused,
        keys.status(queue, outcome.jid) if outcome.status else unused,
        outcome.unique_lock if releases else unused,
    )
    entry_args = (
        order.fetched.raw, outcome.history, outcome.class_name,
        *metrics_args(outcome, at.refreshes),
        *result_args(outcome.result), outcome.jid if outcome.limit_place else "",
        "1" if own_history else "0", outcome.status, outcome.jid if releases else "",
    )  # fmt: skip
    shared = ScriptCall(scripts.ACK_MANY, shared_keys, shared_args)
    return EntryWrite(shared, entry_keys, entry_args)


def _retry(order: SettleOrder, at: Placement) -> EntryWrite:
    """A plain retry's entry of retry_many.lua."""
    queue, outcome, kept, now = order.fetched.queue, order.outcome, at.retention, at.now
    day = day_of(now)
    shared_keys = (
        at.holder, keys.retry(queue),
        keys.stat(queue, "processed"), keys.stat(queue, "processed", day),
        keys.stat(queue, "failed"), keys.stat(queue, "failed", day),
        keys.located(queue),
    )  # fmt: skip
    shared_args = (
        _owned(at), DAY_COUNTER_TTL, kept.attempts_kept, int(kept.attempts_ttl),
        kept.history_per_job, kept.history_per_class, int(kept.history_ttl), now,
        int(kept.metrics_ttl),
    )  # fmt: skip
    entry_keys = (
        keys.orphanings(queue, outcome.jid),
        keys.handbacks(queue, outcome.jid),
        keys.job_attempts(queue, outcome.jid),
        keys.history(queue, outcome.jid),
        keys.class_history(queue, outcome.class_name),
        *metrics_keys(outcome.class_name, outcome.sample, now, queue),
        outcome.limit_place or keys.no_lock(queue),
    )
    entry_args = (
        order.fetched.raw, outcome.jid, outcome.score, outcome.payload, outcome.attempt,
        outcome.history, "1" if outcome.history_per_job else "0",
        outcome.class_name, *metrics_args(outcome, at.refreshes),
        "release" if outcome.limit_place else "",
    )  # fmt: skip
    shared = ScriptCall(scripts.RETRY_MANY, shared_keys, shared_args)
    return EntryWrite(shared, entry_keys, entry_args)


def settle_call(order: SettleOrder, at: Placement) -> ScriptCall:
    """The settle.lua call of `order`: any outcome's, the one `write_of` gives any but a
    plain ack or retry (its reply: 1, or 0 if the entry was no longer on the list)."""
    queue, outcome, kept, now = order.fetched.queue, order.outcome, at.retention, at.now
    day = day_of(now)
    counter = _COUNTERS.get(outcome.kind, "failed")
    events, event = event_target(outcome, queue)
    no_lock = keys.no_lock(queue)
    settle_keys = (
        at.holder,
        keys.retry(queue) if outcome.kind == "retry" else keys.dead(queue),
        keys.stat(queue, "processed"),
        keys.stat(queue, "processed", day),
        keys.stat(queue, counter),
        keys.stat(queue, counter, day),
        keys.orphanings(queue, outcome.jid),
        keys.job_attempts(queue, outcome.jid),
        keys.history(queue, outcome.jid),
        keys.class_history(queue, outcome.class_name),
        keys.status(queue, outcome.jid),
        outcome.unique_lock or no_lock,
        outcome.running_lock or no_lock,
        keys.handbacks(queue, outcome.jid),
        *metrics_keys(outcome.class_name, outcome.sample, now, queue),
        outcome.limit_place or no_lock,
        events,
        result_key(outcome.jid, outcome.result, queue),
        keys.located(queue),
    )
    settle_args = (
        order.fetched.raw, _owned(at), outcome.kind, outcome.score, outcome.payload,
        DAY_COUNTER_TTL, *kept.dead_trim(now),
        outcome.attempt, kept.attempts_kept, int(kept.attempts_ttl),
        outcome.history, kept.history_per_job, kept.history_per_class, int(kept.history_ttl),
        outcome.status, int(kept.status_ttl), now,
        outcome.jid, outcome.unique_action, int(outcome.lock_ttl * 1000),
        "release" if outcome.running_lock else "",
        "1" if outcome.history_per_job else "0",
        outcome.class_name, *metrics_args(outcome, at.refreshes),
        "1" if outcome.sample and outcome.sample.failed else "0", int(kept.metrics_ttl),
        "release" if outcome.limit_place else "",
        event,
        *result_args(outcome.result),
    )  # fmt: skip
    return ScriptCall(scripts.SETTLE, settle_keys, settle_args)
