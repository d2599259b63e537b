"""The Workers page's process cards, with each process's 24 h memory sparkline."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import attrs

from cogworker.adapters.dashboard_processes import ProcessInfo
from cogworker.domain import memory, sparkline

#: A heartbeat older than this many of the config's intervals is flagged stale...
STALE_BEATS = 3
#: ...but never sooner than this (seconds): a worker may beat less often than its reader thinks.
STALE_FLOOR = 15.0


def stale_after(heartbeat_interval: float) -> float:
    """Seconds after which a process's last heartbeat is stale, for a config's interval."""
    return max(STALE_FLOOR, STALE_BEATS * heartbeat_interval)


@attrs.frozen(kw_only=True)
class Sparkline:
    """What the template draws (geometry from `domain.sparkline`) and the hover script reads."""

    values: tuple[int | None, ...]
    start: int
    step: int
    low: float
    high: float
    segments: tuple[sparkline.Segment, ...]
    summary: sparkline.Summary | None

    @classmethod
    def of(cls, samples: Sequence[memory.Sample]) -> Sparkline:
        """The sparkline of a process's memory slots, oldest first."""
        values = tuple(sample.kib for sample in samples)
        low, high = sparkline.value_range(values)
        return cls(
            values=values,
            start=samples[0].slot_start if samples else 0,
            step=memory.SAMPLE_SECONDS,
            low=low,
            high=high,
            segments=sparkline.segments(values),
            summary=sparkline.summary(values),
        )

    @property
    def data(self) -> str:
        """The values as JSON (numbers and nulls only) for the hover script."""
        return json.dumps(list(self.values))


@attrs.frozen(kw_only=True)
class ProcessCard:
    """One process as its card shows it."""

    identity: str
    hostname: str
    pid: str
    queues: str
    concurrency: int
    busy: int
    rss_kb: str
    beat: float | None
    age: float | None
    stale: bool
    quiet: bool
    stopping: bool
    version: str
    started_at: float | None
    spark: Sparkline
    #: What can't be read of this process: its keys, or heartbeat fields cogworker never writes.
    problems: tuple[str, ...]

    @property
    def busy_percent(self) -> int:
        """Busy threads as a share of concurrency, 0..100."""
        if self.concurrency <= 0:
            return 0
        return min(100, round(self.busy / self.concurrency * 100))

    @classmethod
    def of(
        cls, info: ProcessInfo, samples: Sequence[memory.Sample], now: float, stale_after: float
    ) -> ProcessCard:
        """The card of a process, as of Redis's `now`."""
        fields = info.fields
        beat = _number(fields.get("beat"))
        age = None if beat is None else max(0.0, now - beat)
        concurrency = _count(fields.get("concurrency", "0"))
        problems = info.problems
        if concurrency is None:
            problems += (f"concurrency {fields['concurrency']!r:.40} is not a count",)
        return cls(
            identity=info.identity,
            hostname=fields.get("hostname", ""),
            pid=fields.get("pid", ""),
            queues=_queues(fields.get("queues", "")),
            concurrency=concurrency or 0,
            busy=info.busy,
            rss_kb=fields.get("rss_kb", ""),
            beat=beat,
            age=age,
            stale=age is None or age > stale_after,
            quiet=fields.get("quiet") == "true",
            stopping=fields.get("stopping") == "true",
            version=fields.get("version", ""),
            started_at=_number(fields.get("started_at")),
            spark=Sparkline.of(samples),
            problems=problems,
        )


def _number(text: str | None) -> float | None:
    """A finite number, or None (absent, or not one: "nan" and "inf" are no time)."""
    try:
        number = float(text) if text is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def _count(text: str) -> int | None:
    """A whole number as a heartbeat writes it, or None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def _queues(text: str) -> str:
    """The heartbeat's JSON list of [name, weight] entries as `a, b (3)`; raw text if odd."""
    try:
        entries = json.loads(text)
    except ValueError:
        return text
    if not isinstance(entries, list):
        return text
    names = []
    for entry in entries:
        if isinstance(entry, list) and entry:
            weight = entry[1] if len(entry) > 1 else None
            names.append(f"{entry[0]} ({weight})" if weight not in (None, 0, 1) else str(entry[0]))
        else:
            names.append(str(entry))
    return ", ".join(names)
