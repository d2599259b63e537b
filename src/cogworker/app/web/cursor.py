"""A position in the sorted sets, as the pages' links and the bulk actions' runs carry it.

Apart from `params`, which parses it from a query: the inspecting commands
(`cogworker jobs`, `retry`...) walk the sets with it and never load Litestar.
"""

from __future__ import annotations

from urllib.parse import quote

import attrs


@attrs.frozen(kw_only=True)
class Cursor:
    """A position in the sorted sets of one kind, merged over queues: an entry's score, its
    key (jid, or digest), the queue whose set holds it (its `part`) and, when known, its
    place among the entries of that set sharing its score (`SCORE@TIE/PART~KEY`; without
    `@TIE` when unknown, without `/PART` for the part of the empty queue name; the part and
    the key percent-encoded, so any jid travels in a link)."""

    score: float
    key: str
    tie: int | None = None
    part: str = ""

    def __str__(self) -> str:
        tie = "" if self.tie is None else f"@{self.tie}"
        part = f"/{quote(self.part, safe='').replace('~', '%7E')}" if self.part else ""
        return f"{self.score!r}{tie}{part}~{quote(self.key, safe='')}"
