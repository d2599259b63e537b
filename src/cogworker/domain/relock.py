"""Layout step 6's rewrite of a waiting job's record: the lock names it carries move from
the older layout's (`cogworker:unique:L`, `cogworker:periodic:running:N`) to its queue's
slot (`cogworker:{q:Q}:unique:L`, `cogworker:{q:Q}:periodic:running:N`).

A record names its locks in fields `unique_lock` and `running_lock`: a job's payload
(waiting in a queue, a sorted set, an in-progress or parking list, a batch's
callbacks), a handed-over settlement (which holds the payload it files as text, in
`payload`), a periodic schedule entry (its class's options, in `options`).  Pure:
what a record becomes and which locks move with it; `adapters.layout_rewrite` writes
each entry and its job's locks in one script.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from cogworker.domain.json_values import compact_json

#: The older layout's lock names, by what each is called in a queue's slot.
OLD_PREFIXES = {
    "cogworker:unique:": "unique:",
    "cogworker:periodic:running:": "periodic:running:",
}
#: The fields naming a record's locks.
LOCK_FIELDS = ("unique_lock", "running_lock")
_OLD_TEXTS = tuple(prefix.encode() for prefix in OLD_PREFIXES)


def new_lock_name(old: str, queue: str) -> str | None:
    """The name the lock `old` has in `queue`'s slot; None if `old` is no older layout's
    lock name (a new one, or anything else)."""
    for prefix, kind in OLD_PREFIXES.items():
        if old.startswith(prefix):
            return f"cogworker:{{q:{queue}}}:{kind}{old.removeprefix(prefix)}"
    return None


@attrs.frozen(kw_only=True)
class LockMove:
    """A lock moved to its new name, if the record's job holds it (it holds the jid)."""

    old: str
    new: str


@attrs.frozen(kw_only=True)
class Relocked:
    """A record rewritten: its new text, the jid whose locks move with it ("": none, as a
    schedule entry's, which no job holds), and the moves."""

    entry: str
    holder: str
    moves: tuple[LockMove, ...]


def relocked(entry: bytes | str) -> Relocked | None:
    """What `entry` becomes; None when it names no lock by an older name, isn't a JSON
    object, or names no queue to put its locks in (it is then left as it is: its locks
    stay under the names it gives them, where a settlement releases them)."""
    raw = entry.encode() if isinstance(entry, str) else entry
    if not any(text in raw for text in _OLD_TEXTS):
        return None  # most entries: a substring test
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    rewritten, moves = _rewritten(record, "")
    if not moves:
        return None
    holder = record.get("jid")
    return Relocked(
        entry=compact_json(rewritten),
        holder=holder if isinstance(holder, str) else "",
        moves=tuple(dict.fromkeys(moves)),
    )


def _rewritten(record: Mapping[str, Any], queue: str) -> tuple[dict[str, Any], list[LockMove]]:
    """`record` with its lock names (and those of the payload or options it holds) in its
    queue's slot (its own `queue`, else `queue`, else its payload's); the moves."""
    out, moves = dict(record), []
    own = record.get("queue")
    queue = own if isinstance(own, str) and own else queue
    inner = _payload(record.get("payload"))
    if inner is not None:
        rewritten, inner_moves = _rewritten(inner, queue)
        if inner_moves:
            out["payload"], moves = compact_json(rewritten), inner_moves
        queue = queue or _text(inner.get("queue"))
    options = record.get("options")
    if isinstance(options, dict):
        out["options"], option_moves = _rewritten(options, queue)
        moves += option_moves
    if not queue:
        return out, moves
    for field in LOCK_FIELDS:
        old = record.get(field)
        new = new_lock_name(old, queue) if isinstance(old, str) else None
        if isinstance(old, str) and new is not None:
            out[field] = new
            moves.append(LockMove(old=old, new=new))
    return out, moves


def _payload(value: object) -> dict[str, Any] | None:
    """The record a text field holds (a handed-over settlement's payload), if any."""
    if not isinstance(value, str) or not value.startswith("{"):
        return None
    try:
        inner = json.loads(value)
    except ValueError:
        return None
    return inner if isinstance(inner, dict) else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
