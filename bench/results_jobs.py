"""Jobs for results_memory.py: each keeps a small result for an hour."""

from __future__ import annotations

import cogworker

config = cogworker.Config(concurrency=10, poll_interval=0.5)


class Kept(cogworker.Job, keep_result=3600):
    """Returns a small value: a dict of an id and a flag (`{"n":123,"ok":true}`)."""

    def perform(self, number: int) -> dict[str, object]:
        """The value kept."""
        return {"n": number, "ok": True}
