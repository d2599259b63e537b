"""The job page's kept result (docs/results.md): read by jid, without waiting."""

from __future__ import annotations

from cogworker.adapters import results
from cogworker.app.web.context import Dashboard
from cogworker.domain.results import Stored

#: Characters of a result shown on the job page (a result may hold up to a MiB).
SHOWN = 2000


def kept_result(dash: Dashboard, jid: str) -> Stored | None:
    """The result `jid` keeps now, if it keeps one: its value, or how it ended."""
    return results.kept(dash.client.redis, jid)
