"""Where a link says a job is, so that its page finds it without searching.

A page listing jobs knows where each one is, and its links say so: a
sorted set's entry by its cursor (`in=dead&at=SCORE@TIE~KEY`), a queue's
by its index from the end that runs next (`in=queue&queue=NAME&at=INDEX`),
a running job by `in=running`.  The job page then looks there only:
`O(log N)` in a sorted set (the entries sharing the score, from the
remembered tie), a window before the index in a queue (jobs only move
towards the end that runs next), the processes' current work.  A link
without a hint ("Go to jid") searches (`app.web.locate.search`), and
redirects to the hinted link of what it found, so that the page's polls
don't search again.
"""

from __future__ import annotations

from typing import assert_never

import attrs

from cogworker.app.web.cursor import Cursor
from cogworker.app.web.name_refs import queue_ref
from cogworker.app.web.sets import KINDS

QUEUE, RUNNING = "queue", "running"
#: Where a link may say a job is: a set's slug, a queue, or running.
PLACES = (*KINDS, QUEUE, RUNNING)
#: The deepest index a queue's link may name (its page shows at most 10,000 jobs).
DEEPEST = 1_000_000


@attrs.frozen(kw_only=True)
class InSet:
    """In the set of the page `slug`, at `cursor`."""

    slug: str
    cursor: Cursor


@attrs.frozen(kw_only=True)
class InQueue:
    """In `queue`, `index` jobs from the end that runs next (or nearer to it by now)."""

    queue: str
    index: int


@attrs.frozen(kw_only=True)
class Running:
    """Run by a process."""


Hint = InSet | InQueue | Running


def hint_query(hint: Hint) -> dict[str, str]:
    """The query parameters of a link saying `hint`."""
    match hint:
        case InSet(slug=slug, cursor=cursor):
            return {"in": slug, "at": str(cursor)}
        case InQueue(queue=queue, index=index):
            return {"in": QUEUE, "queue": queue_ref(queue), "at": str(index)}
        case Running():
            return {"in": RUNNING}
        case _:
            assert_never(hint)


def described(hint: Hint) -> str:
    """Where a hint said the job was, as a sentence's end reads it."""
    match hint:
        case InSet(slug=slug):
            return f"in {KINDS[slug].title}"
        case InQueue(queue=queue):
            return f"in the queue {queue}"
        case Running():
            return "running"
        case _:
            assert_never(hint)
