"""The cases of the shared run, and `Observed`: reading what a run left in Redis and its log."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import attrs
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.policy import jobs
from tests.support.async_variants import Kind, of_kind
from tests.support.processes import CogworkerProcess

SHARED_APP = "tests.policy.jobs:shared_config"
RETRY_KEY = "cogworker:{q:default}:retry"
DEAD_KEY = "cogworker:{q:default}:dead"
QUEUE_KEY = keys.queue("default")
FAILED_KEY = keys.stat("default", "failed")
PROCESSED_KEY = keys.stat("default", "processed")
#: The class name of a missing job class (raw payloads name it).
VANISHED = "tests.policy.jobs.Vanished"
UNPARSEABLE = b'{"class": "tests.policy.jobs.Fails", "args": [not json'

#: case name -> (job class, args) enqueued through a cogworker Client, for each kind.
CASES: dict[str, tuple[type[cogworker.Job], tuple[Any, ...]]] = {
    # table 1: what retry_in returns
    "int": (jobs.Fails, ("int",)),
    "float": (jobs.Fails, ("float",)),
    "zero": (jobs.Fails, ("zero", 1)),
    "none": (jobs.Fails, ("none",)),
    "kill": (jobs.Fails, ("kill",)),
    "negative": (jobs.Fails, ("negative",)),
    "nan": (jobs.Fails, ("nan",)),
    "inf": (jobs.Fails, ("inf",)),
    "bool": (jobs.Fails, ("bool",)),
    "string": (jobs.Fails, ("string",)),
    "raises": (jobs.Fails, (jobs.RAISE,)),
    "year": (jobs.Fails, ("year",)),
    "retry_zero": (jobs.FailsRetryZero, ("hour",)),
    "budget": (jobs.FailsRetryTwo, ("zero",)),
    # table 2: how the job died
    "retry_false": (jobs.FailsRetryFalse, ("hour",)),
    # scope points
    "swallowed": (jobs.SwallowedJob, ("hour",)),
    "mw_raises": (jobs.MiddlewareRaisesJob, ("hour",)),
    "one_param": (jobs.OneParamJob, ()),
    "raising_exhausted": (jobs.RaisingExhaustedJob, ("hour",)),
    "inheriting": (jobs.InheritingJob, ("kill",)),
}
#: case name -> (class named, retry) pushed as raw payloads (the class can't be loaded:
#: no kind), once for both kinds.
RAW_CASES: dict[str, tuple[str, bool]] = {
    "missing_class": (VANISHED, True),
    "not_a_job": ("tests.policy.jobs.NotAJob", True),
    "missing_dead": (VANISHED, False),
}
#: Cases that end in the retry set after one failure.
IN_RETRY = (
    "int",
    "float",
    "none",
    "negative",
    "nan",
    "inf",
    "bool",
    "string",
    "raises",
    "year",
    "mw_raises",
    "one_param",
    "missing_class",
    "not_a_job",
)
#: Cases that end in the dead set, and the death hooks each should run.
ALL_DEATH_HOOKS = (jobs.CLASS_HOOK, *jobs.HANDLER_NAMES)
IN_DEAD: dict[str, tuple[str, ...]] = {
    "kill": ALL_DEATH_HOOKS,
    "retry_zero": ALL_DEATH_HOOKS,
    "budget": ALL_DEATH_HOOKS,
    "retry_false": ALL_DEATH_HOOKS,
    "raising_exhausted": ALL_DEATH_HOOKS,
    "inheriting": ALL_DEATH_HOOKS,
    "missing_dead": jobs.HANDLER_NAMES,
}
#: Cases whose job ends acknowledged (in neither set).
ACKED = ("zero", "swallowed")


def raw_payload(class_name: str, retry: bool) -> tuple[str, str]:
    """A (jid, payload) of a job naming `class_name`, as a client would have pushed it."""
    jid = secrets.token_hex(12)
    now = time.time()
    job = {
        "class": class_name,
        "args": [],
        "jid": jid,
        "queue": "default",
        "retry": retry,
        "created_at": now,
        "enqueued_at": now,
    }
    return jid, json.dumps(job)


@attrs.define
class Observed:
    """What the shared run left for one kind of job class: its Redis, its worker, and the
    jid of every case of that kind (and of the raw cases, which have none)."""

    rc: redis.Redis
    worker: CogworkerProcess
    kind: Kind
    jids: dict[str, str] = attrs.field(factory=dict)
    #: How far the failed and processed counters rose while the DISCARD case ran alone.
    discard_counters: tuple[int, int] = (0, 0)
    #: Empty if everything settled in time, else what was still missing.
    unsettled: str = ""
    #: The jid of every case of the shared run, of either kind.
    every_jid: frozenset[str] = frozenset()

    def job_class(self, job_class: type[cogworker.Job]) -> type[cogworker.Job]:
        """`job_class` as this run's kind enqueued it (itself, or its async variant)."""
        return of_kind(job_class, self.kind)

    def records(self, jid: str | None = None, hook: str | None = None) -> list[dict[str, Any]]:
        """The recorded hook calls (of one jid and/or one hook), in call order."""
        found = [json.loads(line) for line in self.rc.lrange(jobs.HOOKS_KEY, 0, -1)]
        return [
            r
            for r in found
            if (jid is None or r.get("jid") == jid) and (hook is None or r["hook"] == hook)
        ]

    def death_hooks(self, jid: str) -> list[str]:
        """The names of the death hooks that ran for `jid`, in order."""
        return [r["hook"] for r in self.records(jid) if r["hook"] in ALL_DEATH_HOOKS]

    def entry(self, key: str, jid: str) -> tuple[dict[str, Any], float] | None:
        """`jid`'s entry in a sorted set (retry, dead) with its score, or None."""
        for member, score in self.rc.zrange(key, 0, -1, withscores=True):
            decoded = json.loads(member)
            if decoded.get("jid") == jid:
                return decoded, score
        return None

    def entries(self, key: str) -> list[dict[str, Any]]:
        """Every decoded entry of a sorted set."""
        return [json.loads(member) for member in self.rc.zrange(key, 0, -1)]

    def in_progress(self) -> list[bytes]:
        """Every payload on any in-progress list."""
        return [
            raw
            for key in self.rc.scan_iter(match=jobs.IN_PROGRESS_PATTERN)
            for raw in self.rc.lrange(key, 0, -1)
        ]

    def log(self) -> str:
        """The worker's log so far."""
        return self.worker.log_text()

    def log_lines(self, jid: str) -> list[str]:
        """The worker's log lines that mention `jid`."""
        return [line for line in self.log().splitlines() if jid in line]

    def context(self) -> str:
        """A failure message's context: what didn't settle, and the log tail."""
        tail = self.worker.log_tail(60)
        return f"unsettled: {self.unsettled or 'nothing'}\nworker log tail:\n{tail}"


def counters(rc: redis.Redis) -> tuple[int, int]:
    """The failed and processed counters now."""
    return int(rc.get(FAILED_KEY) or 0), int(rc.get(PROCESSED_KEY) or 0)


def missing(run: Observed) -> list[str]:
    """What hasn't settled yet among `run`'s cases (and the unparseable payload)."""
    missing = [f"{c} not in retry" for c in IN_RETRY if run.entry(RETRY_KEY, run.jids[c]) is None]
    missing += [f"{c} not in dead" for c in IN_DEAD if run.entry(DEAD_KEY, run.jids[c]) is None]
    missing += [
        f"{c}: death hooks {run.death_hooks(run.jids[c])}"
        for c, hooks in IN_DEAD.items()
        if len(run.death_hooks(run.jids[c])) < len(hooks)
    ]
    if not any(e.get("class") == "unparseable_job" for e in run.entries(DEAD_KEY)):
        missing.append("unparseable payload not in dead")
    if not run.rc.sismember(jobs.DONE_KEY, run.jids["zero"]):
        missing.append("zero didn't succeed on its second run")
    if not run.records(run.jids["swallowed"], "middleware_swallowed"):
        missing.append("swallowed didn't reach its middleware")
    if run.rc.llen(QUEUE_KEY) or run.in_progress():
        missing.append("jobs still queued or in progress")
    return missing


def delay_of(entry: dict[str, Any], score: float) -> float:
    """A retry entry's delay: its score less the time of the failure that put it there."""
    failed = entry.get("retried_at") or entry["failed_at"]
    return score - float(failed)


def default_bounds(retry_count: int) -> tuple[float, float]:
    """The default backoff range of retry `retry_count`: count**4 + 15 + [0, 30) * (count + 1)."""
    low = float(retry_count**4 + 15)
    return low, low + 30.0 * (retry_count + 1)


def qualified(kind: type) -> str:
    """`module.Qualname` of a class, as the hooks record exception classes."""
    return f"{kind.__module__}.{kind.__qualname__}"
