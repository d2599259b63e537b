"""A layout step's rewrites (`domain.layout.Step.rewrites`): the entries of keys rewritten
in place, and layout step 6's, which cover every place a job's record may wait.

Data only: `domain.relock` decides what an entry becomes, `adapters.layout_rewrite`
reads and writes the entries.
"""

from __future__ import annotations

from typing import Literal

import attrs

#: The Redis types whose entries a `Rewrite` rewrites in place.
EntryKind = Literal["list", "zset", "hash"]


@attrs.frozen(kw_only=True)
class Rewrite:
    """The entries of the keys named like `pattern` (`*`: any text; without one, a single
    key) of Redis type `kind`, each rewritten where it is (a list's entry at its place, a
    sorted set's with its score, a hash's under its field) as `domain.relock` decides, its
    job's locks moved with it in the same step.  Keys are found, and entries read, as the
    rewrite runs: after the renames of the steps before."""

    pattern: str
    kind: EntryKind


#: The lists (a name's tail) where a job's record may wait, naming its locks: queues,
#: processes' in-progress lists, hand-overs, parked repeat orphans and hand-backs.
_LISTS = ("{q:*}:queue", "inprogress:*", "unsettled", "repeat_orphans", "repeat_handbacks")

#: Layout step 6's: every record naming a lock the old way (`domain.relock`), wherever a
#: job may wait, its scheduled, retry and dead sets, batches' callbacks and the periodic
#: schedule's entries (their class's options) included.
LOCK_REWRITES: tuple[Rewrite, ...] = (
    *(Rewrite(pattern=f"cogworker:{name}", kind="list") for name in _LISTS),
    *(Rewrite(pattern=f"cogworker:{name}", kind="zset") for name in ("schedule", "retry", "dead")),
    Rewrite(pattern="cogworker:{b:*}:batch", kind="hash"),
    Rewrite(pattern="cogworker:{periodic}:schedule", kind="hash"),
)
