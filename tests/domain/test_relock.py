"""Layout step 6's decision: what a waiting record becomes once its locks live in its queue's
slot, and which locks move with it."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain import payload, relock
from cogworker.domain.job import JobRecord
from cogworker.domain.relock import LockMove
from tests.domain.strategies import job_records, names

#: Which of a job's two locks its payload names: either, both.
lock_fields = st.sets(st.sampled_from(relock.LOCK_FIELDS), min_size=1)
OLD = {"unique_lock": "cogworker:unique:", "running_lock": "cogworker:periodic:running:"}
NEW = {"unique_lock": ":unique:", "running_lock": ":periodic:running:"}


def _old_locks(fields: set[str], name: str) -> dict[str, str]:
    return {field: OLD[field] + name for field in fields}


def _new_lock(field: str, queue: str, name: str) -> str:
    return "cogworker:{q:" + queue + "}" + NEW[field] + name


def _locked(job: JobRecord, locks: dict[str, str]) -> JobRecord:
    return attrs.evolve(job, extra={**job.extra, **locks})


@given(job=job_records(), fields=lock_fields, name=names)
def test_a_payload_names_its_locks_in_its_queues_slot_and_nothing_else_changes(
    job: JobRecord, fields: set[str], name: str
) -> None:
    """Each old lock name becomes the same lock's name in the job's queue's slot; the job
    holds the rest of its payload as it was; its jid's locks move with it."""
    old = _old_locks(fields, name)

    decided = relock.relocked(payload.encode(_locked(job, old)))

    assert decided is not None
    new = {field: _new_lock(field, job.queue, name) for field in fields}
    assert payload.decode(decided.entry).unwrap() == _locked(job, new)
    assert decided.holder == job.jid
    assert set(decided.moves) == {LockMove(old=old[f], new=new[f]) for f in fields}


@given(job=job_records(), fields=lock_fields, name=names)
def test_a_rewritten_record_is_rewritten_no_more(
    job: JobRecord, fields: set[str], name: str
) -> None:
    """The decision on its own result is none: a migration run again rewrites nothing."""
    decided = relock.relocked(payload.encode(_locked(job, _old_locks(fields, name))))

    assert decided is not None
    assert relock.relocked(decided.entry) is None


@given(job=job_records())
def test_a_record_naming_no_old_lock_is_left_alone(job: JobRecord) -> None:
    """No lock, or locks named in the new layout already: nothing to rewrite."""
    new = {field: _new_lock(field, job.queue, "x") for field in relock.LOCK_FIELDS}
    plain = attrs.evolve(job, extra={k: v for k, v in job.extra.items()
                                     if k not in relock.LOCK_FIELDS})  # fmt: skip

    assert relock.relocked(payload.encode(plain)) is None
    assert relock.relocked(payload.encode(_locked(plain, new))) is None


@given(job=job_records(), name=names, own_queue=st.booleans())
def test_a_handed_over_settlement_and_the_payload_it_files_are_rewritten_alike(
    job: JobRecord, name: str, own_queue: bool
) -> None:
    """A hand-over names the lock it releases and holds the payload it files: both go to the
    job's queue's slot, the queue read from the record or (an older one's) its payload."""
    old = _old_locks({"unique_lock"}, name)
    filed = payload.encode(_locked(job, old))
    record = {"kind": "retry", "jid": job.jid, "payload": filed,
              "queue": job.queue if own_queue else "", **old}  # fmt: skip

    decided = relock.relocked(json.dumps(record))

    assert decided is not None
    rewritten = json.loads(decided.entry)
    new = _new_lock("unique_lock", job.queue, name)
    assert rewritten["unique_lock"] == new
    assert payload.decode(rewritten["payload"]).unwrap().extra["unique_lock"] == new
    assert decided.moves == (LockMove(old=old["unique_lock"], new=new),)
    assert decided.holder == job.jid


@given(queue=names, name=names)
def test_a_schedule_entry_names_its_runs_lock_in_their_queue_and_holds_none(
    queue: str, name: str
) -> None:
    """A periodic entry's options give its runs their unique lock: renamed in the entry's
    queue's slot; the entry is no job, so no lock moves with it."""
    options = {"unique": "until_executed", **_old_locks({"unique_lock"}, name)}
    entry = {"name": "nightly", "queue": queue, "last_jid": "j1", "options": options}

    decided = relock.relocked(json.dumps(entry, sort_keys=True))

    assert decided is not None
    assert json.loads(decided.entry)["options"]["unique_lock"] == _new_lock(
        "unique_lock", queue, name
    )
    assert decided.holder == ""


@pytest.mark.parametrize("raw", [
    b"cogworker:unique:x",  # not JSON
    b'["cogworker:unique:x"]',  # not an object
    b'{"jid": "j", "unique_lock": "cogworker:unique:x"}',  # no queue to put it in
    b'{"jid": "j", "queue": "", "payload": "", "unique_lock": "cogworker:unique:x"}',
])  # fmt: skip
def test_a_record_that_gives_no_queue_is_left_as_it_is(raw: bytes) -> None:
    """Its lock then stays where it names it, and its settlement releases it there."""
    assert relock.relocked(raw) is None
