"""The job page's kept result (docs/results.md): read by jid, without waiting."""

from __future__ import annotations

import attrs

from cogworker.adapters import results
from cogworker.app.web.context import Dashboard
from cogworker.app.web.format import indented

#: Characters of a result shown on the job page (a result may hold up to a MiB).
SHOWN = 2000


@attrs.frozen(kw_only=True)
class ResultView:
    """A kept result as the page shows it: the value's JSON, or how the job ended."""

    outcome: str
    value_text: str = ""
    error_class: str = ""
    error_message: str = ""


def kept_result(dash: Dashboard, jid: str) -> ResultView | None:
    """The result `jid` keeps now, if it keeps one."""
    stored = results.kept(dash.client.redis, jid)
    if stored is None:
        return None
    return ResultView(
        outcome=stored.outcome,
        value_text=indented(stored.value) if stored.outcome == "success" else "",
        error_class=stored.error_class,
        error_message=stored.error_message,
    )
