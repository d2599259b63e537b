"""Stored entries as the pages show them, and the filters over them.

An entry is whatever bytes are in Redis: usually a job payload, but
possibly anything (a hand-written entry, a payload another tool wrote, a
non-UTF-8 blob).  Every entry becomes a `JobView`; nothing here raises on
bad data, and nothing here marks text as safe HTML (templates escape it).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import attrs
from returns.pipeline import is_successful

from cogworker.app.web.cursor import Cursor
from cogworker.domain import payload, retries
from cogworker.domain.job import JobRecord

#: Characters of args, errors and raw entries shown in a table row.
PREVIEW_CHARS = 200


def clip(value: str, limit: int = PREVIEW_CHARS) -> str:
    """`value`, cut to `limit` characters with an ellipsis."""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def seconds(value: object) -> float | None:
    """A finite, non-negative number (of seconds, or a unix time), else None: records are read
    defensively, whatever a field holds."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def as_text(raw: bytes) -> str:
    """Bytes from Redis as text; bytes that aren't UTF-8 shown as \\x escapes."""
    return raw.decode("utf-8", "backslashreplace")


def _loose(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def is_plain_key(text: str) -> bool:
    """Whether `text` can identify an entry in a URL or form as it is."""
    return 0 < len(text) <= 100 and text.isprintable() and not text.startswith("#")


def key_of(raw: bytes) -> str:
    """How a page names an entry: its jid, or a digest of its bytes if it has no usable one."""
    loose = _loose(raw)
    return _key(raw, loose.get("jid") if loose is not None else None)


def _key(raw: bytes, jid: object) -> str:
    """`key_of(raw)`, given the jid `raw` holds (None, or anything, if none)."""
    if isinstance(jid, str) and is_plain_key(jid):
        return jid
    return "#" + hashlib.sha256(raw).hexdigest()[:20]


@attrs.frozen(kw_only=True)
class JobView:
    """One entry, readable: the job when it parses, else what is wrong and the raw text."""

    raw: bytes
    key: str
    score: float | None = None
    #: Its place among the entries of a sorted set sharing its score, when known.
    tie: int | None = None
    job: JobRecord | None = None
    problem: str | None = None
    #: The queue whose sorted set holds it (its part of the merged sets), in a sorted set.
    part: str = ""

    @classmethod
    def of(
        cls, raw: bytes, score: float | None = None, tie: int | None = None, part: str = ""
    ) -> JobView:
        """The view of an entry as stored."""
        decoded = payload.decode(raw)
        if is_successful(decoded):
            # The job's jid is the one `key_of` would parse the entry again for.
            job = decoded.unwrap()
            return cls(raw=raw, key=_key(raw, job.jid), score=score, tie=tie, job=job, part=part)
        key = key_of(raw)
        return cls(
            raw=raw, key=key, score=score, tie=tie, problem=str(decoded.failure()), part=part
        )

    @property
    def token(self) -> str:
        """The cursor an action form sends back to name this entry ("" outside a sorted set)."""
        if self.score is None:
            return ""
        return str(Cursor(score=self.score, key=self.key, tie=self.tie, part=self.part))

    @property
    def jid(self) -> str:
        """The job's jid ("" if it has none)."""
        return self.job.jid if self.job else str((_loose(self.raw) or {}).get("jid") or "")

    @property
    def class_name(self) -> str:
        """The job's class, or a note that the entry isn't a job."""
        if self.job:
            return self.job.class_name
        return str((_loose(self.raw) or {}).get("class") or "(not a job)")

    @property
    def queue(self) -> str:
        """The job's queue ("" if it has none)."""
        return self.job.queue if self.job else ""

    @property
    def args_text(self) -> str:
        """The arguments as JSON, or the raw entry when it isn't a job."""
        if self.job is None:
            return as_text(self.raw)
        return json.dumps(list(self.job.args), ensure_ascii=False)

    @property
    def failures(self) -> int:
        """How many of the job's attempts failed (its `retry_count`)."""
        return (self.job.retry_count or 0) if self.job else 0

    @property
    def retries_run(self) -> int:
        """Retries that ran: every failed attempt but the first was one (a job that failed
        once, retry=False or not, made none)."""
        return max(0, self.failures - 1)

    @property
    def retry_budget(self) -> str:
        """The retries the job may make, as people read it: `25 (default)`, `3`, `none`."""
        if self.job is None:
            return "n/a"
        budget = retries.max_retries(self.job.retry)
        if self.job.retry is True:
            return f"{budget} (default)"
        return str(budget) if budget else "none"

    @property
    def timeout(self) -> float | None:
        """The job's time limit in seconds, if its record names one (0 or junk: none)."""
        if self.job is None:
            return None
        value = getattr(self.job, "timeout", None)
        return seconds(self.job.extra.get("timeout") if value is None else value) or None

    @property
    def error_text(self) -> str:
        """`ErrorClass: message`, or the reason the entry isn't a job."""
        if self.job is None:
            return f"unreadable entry: {self.problem}"
        if not (self.job.error_class or self.job.error_message):
            return ""
        return f"{self.job.error_class or 'Error'}: {self.job.error_message or ''}"


@attrs.frozen(kw_only=True)
class Filter:
    """What a set page is narrowed to; empty fields match everything."""

    class_name: str = ""
    queue: str = ""
    jid: str = ""
    error: str = ""

    @property
    def active(self) -> bool:
        """Whether any field narrows the set."""
        return bool(self.class_name or self.queue or self.jid or self.error)

    def as_query(self) -> dict[str, str]:
        """The filter's query parameters (only the ones set)."""
        pairs = {"class": self.class_name, "queue": self.queue, "jid": self.jid}
        pairs["error"] = self.error
        return {name: value for name, value in pairs.items() if value}

    def matches(self, view: JobView) -> bool:
        """Class and error: substring, any case; queue and jid: exact."""
        if self.class_name and self.class_name.lower() not in view.class_name.lower():
            return False
        if self.queue and self.queue != view.queue:
            return False
        if self.jid and self.jid != view.jid:
            return False
        return not self.error or self.error.lower() in view.error_text.lower()
