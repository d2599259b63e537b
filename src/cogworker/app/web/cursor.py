"""A position in a sorted set, as the pages' links and the bulk actions' runs carry it.

Apart from `params`, which parses it from a query: the inspecting commands
(`cogworker jobs`, `retry`...) walk the sets with it and never load Litestar.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class Cursor:
    """A position in a sorted set: an entry's score, its key (jid, or digest) and, when known,
    its place among the entries sharing its score (`SCORE@TIE~KEY`; `SCORE~KEY` without)."""

    score: float
    key: str
    tie: int | None = None

    def __str__(self) -> str:
        tie = "" if self.tie is None else f"@{self.tie}"
        return f"{self.score!r}{tie}~{self.key}"
