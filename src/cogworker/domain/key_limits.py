"""Per-key limits (the class option `limit=`): how many of a class's jobs run at once, or
start in a window, for each value of a key computed from their arguments.

* `Concurrency(max=3, key=...)`: at most `max` jobs of one key running at once;
* `Rate(max=100, per=60, key=...)`: at most `max` starts of one key in any `per` seconds.

A job's key is computed when it is enqueued (its class's `key` called with its
arguments) and carried in its payload as a `Claim`, with the number of times in
a row it found its key full.  A job over its limit is not run, failed or
counted: it waits in the scheduled set for `wait_delay` seconds and is looked
at again.  The numbers (`max`, `per`, the waits) are its class's when it runs.

Pure: the key's value, the jitter and the times are parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from cogworker.domain.json_values import JSON

LimitKind = Literal["concurrency", "rate"]
#: The longest key a limit takes (it becomes part of a Redis key name and a page).
LONGEST_KEY = 200
#: The payload field carrying a job's claim.
FIELD = "limit"


def _check_max(_: object, __: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"a limit's max must be a whole number ≥ 1, got {value!r}")


def _check_seconds(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise ValueError(
            f"a limit's {attribute.name} must be a positive, finite number of seconds, "
            f"got {value!r}"
        )


def _check_key(_: object, __: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not callable(value):
        raise ValueError(f"a limit's key must be a callable of the job's arguments, got {value!r}")


def _check_name(_: object, __: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not value or ":" in value or len(value) > LONGEST_KEY:
        raise ValueError(
            f"a limit's name must be a non-empty text without ':' of at most {LONGEST_KEY} "
            f"characters, got {value!r}"
        )


KeyFunction = Callable[[list[JSON]], object]


@attrs.frozen(kw_only=True)
class _KeyLimit:
    """What both kinds of limit hold."""

    #: Places per key: jobs running (concurrency), starts per window (rate).
    max: int = attrs.field(validator=_check_max)
    #: The job's arguments (a list) → its key, a text; None: one key for all its jobs.
    key: KeyFunction | None = attrs.field(default=None, validator=_check_key)
    #: The limit's name; None: the class's dotted path.  Classes naming the same limit share it.
    name: str | None = attrs.field(default=None, validator=_check_name)
    #: Seconds a job waits after its first refusal; doubled with each refusal in a row...
    wait: float = attrs.field(default=0.5, validator=_check_seconds)
    #: ...up to this.
    longest_wait: float = attrs.field(default=30.0, validator=_check_seconds)


@attrs.frozen(kw_only=True)
class Concurrency(_KeyLimit):
    """At most `max` jobs with the same key running at once, per queue."""

    @property
    def kind(self) -> LimitKind:
        """What is counted: jobs running."""
        return "concurrency"


@attrs.frozen(kw_only=True)
class Rate(_KeyLimit):
    """At most `max` starts of jobs with the same key in any `per` seconds, per queue."""

    #: The window, in seconds.
    per: float = attrs.field(validator=_check_seconds)

    @property
    def kind(self) -> LimitKind:
        """What is counted: starts in a sliding window of `per` seconds."""
        return "rate"


Limit = Concurrency | Rate


@attrs.frozen(kw_only=True)
class Claim:
    """What a job's payload says of its limit: which one, its key, its refusals in a row."""

    kind: LimitKind
    name: str
    key: str
    waits: int = 0


def checked_limit(value: object) -> Limit | None:
    """The class option `limit=` as given; a ValueError naming anything else."""
    if value is None or isinstance(value, (Concurrency, Rate)):
        return value
    raise ValueError(
        f"limit must be cogworker.Concurrency(...) or cogworker.Rate(...), got {value!r}"
    )


def checked_key(value: object, class_path: str) -> str:
    """A limit key a class's `key` returned; a TypeError naming anything but a short text."""
    if not isinstance(value, str):
        raise TypeError(
            f"{class_path}: a limit key must be a str, the key function returned {value!r}"
        )
    if len(value) > LONGEST_KEY:
        raise TypeError(
            f"{class_path}: a limit key is at most {LONGEST_KEY} characters, got {value[:40]!r}"
            f"... ({len(value)})"
        )
    return value


def claim_for(limit: Limit, class_path: str, key: str) -> Claim:
    """A new job's claim on `limit` (of the class at `class_path`) with its `key`."""
    return Claim(kind=limit.kind, name=limit.name or class_path, key=key)


def payload_fields(claim: Claim) -> dict[str, JSON]:
    """The payload field that carries `claim`."""
    fields: dict[str, JSON] = {"kind": claim.kind, "name": claim.name, "key": claim.key}
    if claim.waits:
        fields["waits"] = claim.waits
    return {FIELD: fields}


def claim_of(extra: Mapping[str, object]) -> Claim | None:
    """The claim a payload's fields carry; None for none; a ValueError naming a field that
    can't be one (a payload another program wrote)."""
    given = extra.get(FIELD)
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise ValueError(f"the payload's limit must be an object, got {given!r}")
    kind, name, key = given.get("kind"), given.get("name"), given.get("key")
    waits = given.get("waits", 0)
    if kind not in ("concurrency", "rate"):
        raise ValueError(f"the payload's limit kind must be 'concurrency' or 'rate', got {kind!r}")
    if not isinstance(name, str) or not name or ":" in name:
        raise ValueError(f"the payload's limit name must be a text without ':', got {name!r}")
    if not isinstance(key, str) or len(key) > LONGEST_KEY:
        raise ValueError(f"the payload's limit key must be a short text, got {key!r}")
    if isinstance(waits, bool) or not isinstance(waits, int) or waits < 0:
        raise ValueError(f"the payload's limit waits must be a whole number ≥ 0, got {waits!r}")
    return Claim(kind=kind, name=name, key=key, waits=waits)


def refused(claim: Claim) -> Claim:
    """`claim` once more found its key full."""
    return attrs.evolve(claim, waits=claim.waits + 1)


def governs(limit: Limit | None, claim: Claim, class_path: str) -> bool:
    """Whether a job's `claim` is its class's `limit` now (a class that dropped or changed its
    limit since the enqueue runs the job unlimited)."""
    return limit is not None and (limit.kind, limit.name or class_path) == (claim.kind, claim.name)


def wait_delay(limit: Limit, waits: int, free_in: float, jitter: float) -> float:
    """Seconds until a refused job is looked at again, after its `waits`-th refusal in a row
    (from 1): its limit's `wait`, doubled each time, at most `longest_wait`; never before
    the key is known to free a place (`free_in`, a rate's window); stretched by up to half
    by `jitter` (in [0, 1)) so the waiting jobs of one key don't come back all at once."""
    grown = limit.wait * 2.0 ** min(max(waits - 1, 0), 64)
    return max(min(grown, limit.longest_wait), free_in) * (1.0 + jitter / 2.0)


def waiting_horizon(limit: Limit) -> float:
    """How long a refused job counts as waiting on its key since its last refusal: longer
    than any wait it is given, so every job still waiting was refused within it."""
    per = limit.per if isinstance(limit, Rate) else 0.0
    return 2.0 * (max(limit.longest_wait, per) + 60.0)
