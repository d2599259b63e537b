"""Cancel: end one job wherever it is (the job page's and "Running now"'s Cancel buttons).

The dashboard cancels as any caller does, through `Client.cancel`: a
waiting job is taken off, a running one is told to stop through its
process's signal list; the banner says which (or that there was nothing
to cancel).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, post
from litestar.exceptions import ValidationException
from litestar.response import Redirect

from cogworker.app.web import params
from cogworker.app.web.context import back, threaded, writable
from cogworker.app.web.params import Form

#: Where the form came from -> the page it goes back to.
RETURNS = ("job", "workers")


@post("/cancel", name="cancel")
@threaded
def cancel(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Cancel the job `jid`; back to the job page or to Workers, with what happened."""
    dash = writable(request)
    form = params.form_values(data)
    jid = params.jid_ref(form, "jid")
    returning = params.choice(form, "back", RETURNS, "job")
    try:
        result = dash.client.cancel(jid)
    except ValueError as error:  # not something a jid can be: say which value
        raise ValidationException(str(error)) from error
    if returning == "workers":
        return back(request, "/workers", cancelled=result.value)
    return back(request, "/job", jid=jid, cancelled=result.value)
