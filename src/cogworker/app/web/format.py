"""Jinja filters: times, sizes and counts as people read them.

They return plain strings; escaping is the template's job (autoescape).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable
from typing import Any

from cogworker.app.web.entries import clip
from cogworker.app.web.name_refs import class_ref, jid_ref, queue_ref
from cogworker.domain.class_metrics import RESOLUTION

#: Characters that change how text around them is shown without being seen: bidirectional
#: overrides and isolates (`"\u202egnp.exe"` displays as `exe.png`), zero-width and other
#: format characters, and control characters other than tab and newline.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]"
)


def visible_controls(text: str) -> str:
    """`text` with every invisible or direction-changing character shown as its escape."""
    return _INVISIBLE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def utc(timestamp: object) -> str:
    """A unix timestamp as `YYYY-MM-DD HH:MM:SS UTC`, or "n/a"."""
    if not isinstance(timestamp, int | float) or not math.isfinite(timestamp):
        return "n/a"
    try:
        moment = dt.datetime.fromtimestamp(timestamp, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return "n/a"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def iso(timestamp: object) -> str:
    """A unix timestamp as ISO 8601 (for `<time datetime>`), or ""."""
    if not isinstance(timestamp, int | float) or not math.isfinite(timestamp):
        return ""
    try:
        return dt.datetime.fromtimestamp(timestamp, dt.UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return ""


def span(seconds: object) -> str:
    """A length of time, short: `42 s`, `5 min`, `3 h 10 min`, `2 d 4 h`."""
    if not isinstance(seconds, int | float) or not math.isfinite(seconds):
        return "n/a"
    whole = int(abs(seconds))
    if whole < 60:
        # Under a second it shows tenths, but never `1.0 s` (0.96 s rounds up to it).
        tenths = round(abs(seconds), 1)
        return f"{tenths:.1f} s" if tenths < 1 else f"{abs(seconds):.0f} s"
    minutes, hours, days = whole // 60, whole // 3600, whole // 86_400
    if hours < 1:
        return f"{minutes} min"
    if days < 1:
        return f"{hours} h {minutes % 60} min"
    return f"{days} d {hours % 24} h"


def runtime(seconds: object) -> str:
    """A run time, as precise as it is short: `0.8 ms`, `42.5 ms`, `1.25 s`, `5 min`."""
    if not isinstance(seconds, int | float) or not math.isfinite(seconds):
        return "n/a"
    if seconds < 1:
        return f"{seconds * 1_000:.3g} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    return span(seconds)


def quantile(seconds: object) -> str:
    """A run-time quantile estimated from the histogram: `< 1 ms` within its first bucket
    (where a 4 µs run's p50 would read 0.5 ms), else as `runtime` says."""
    if isinstance(seconds, int | float) and 0 <= seconds <= RESOLUTION:
        return f"< {runtime(RESOLUTION)}"
    return runtime(seconds)


def relative(timestamp: object, now: float) -> str:
    """`5 min ago` or `in 3 h 10 min`."""
    if not isinstance(timestamp, int | float) or not math.isfinite(timestamp):
        return "n/a"
    delta = now - timestamp
    return f"{span(delta)} ago" if delta >= 0 else f"in {span(delta)}"


def kib(value: object) -> str:
    """A size in KiB as `123.4 MB` (MiB, as the spec's cards say "M"), or "n/a"."""
    try:
        number = float(str(value))
    except ValueError:
        return "n/a"
    if not math.isfinite(number) or number < 0:
        return "n/a"
    if number >= 1024 * 1024:
        return f"{number / 1024 / 1024:.2f} GB"
    return f"{number / 1024:.1f} MB"


def count(value: object) -> str:
    """An integer with thousands separators."""
    return f"{value:,}" if isinstance(value, int) else str(value)


def indented(value: object) -> str:
    """A JSON value indented for the job page, in full (the page collapses a long one)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)


def as_json(value: object) -> str:
    """A value as one line of JSON: plain text for the template to escape (never `tojson`'s
    Markup: job data is not marked safe, however it is encoded)."""
    return json.dumps(value, ensure_ascii=False, default=repr)


FILTERS: dict[str, Callable[..., Any]] = {
    "utc": utc,
    "iso": iso,
    "span": span,
    "runtime": runtime,
    "quantile": quantile,
    "relative": relative,
    "kib": kib,
    "count": count,
    "indented": indented,
    "json": as_json,
    "clip": clip,
    "queue_ref": queue_ref,
    "class_ref": class_ref,
    "jid_ref": jid_ref,
}
