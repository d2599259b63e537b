"""Scheduled, Retries and Dead: filtered pages by cursor, and actions on rows or a selection
(on everything matching: `routes.bulk`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from litestar import Request, get, post
from litestar.exceptions import NotFoundException, ValidationException
from litestar.response import Redirect, Template

from cogworker.app.web import paging, params
from cogworker.app.web.context import (
    back,
    dashboard,
    query_of,
    render,
    threaded,
    writable,
)
from cogworker.app.web.entries import Filter
from cogworker.app.web.params import Form
from cogworker.app.web.sets import KINDS, Action, SetKind, apply, resolve

PER_PAGE = ("25", "50", "100")
#: Entries one form may name (a page shows at most 100).
MAX_SELECTED = 100
PAGES = [f"/{slug}" for slug in KINDS]


def kind_of(request: Request[Any, Any, Any]) -> SetKind:
    """The set whose page (or action) a request is for, by its path's first segment."""
    slug = request.url.path.strip("/").split("/")[0]
    if slug not in KINDS:
        raise NotFoundException()
    return KINDS[slug]


def filter_of(values: Mapping[str, Sequence[str]]) -> Filter:
    """The filter a query or form names (class, queue, jid, error)."""
    return Filter(
        class_name=params.text(values, "class"),
        queue=params.text(values, "queue"),
        jid=params.text(values, "jid"),
        error=params.text(values, "error"),
    )


def action_of(values: Mapping[str, Sequence[str]], name: str, kind: SetKind) -> Action:
    """The action `name` names, one of `kind`'s (its first if absent)."""
    return cast("Action", params.choice(values, name, kind.actions, kind.actions[0]))


@get(PAGES, name="set")
@threaded
def set_page(request: Request[Any, Any, Any]) -> Template:
    """A page of a set, filtered, from a cursor (its live part when polled)."""
    kind = kind_of(request)
    query = query_of(request)
    where = filter_of(query)
    per = int(params.choice(query, "per", PER_PAGE, PER_PAGE[0]))
    cursor = params.cursor(query, "after")
    store = dashboard(request).store
    page = paging.page_of(
        store.sets, kind.name, descending=kind.descending, cursor=cursor, where=where, per=per
    )
    return render(
        request,
        "set",
        live=True,
        title=kind.title,
        kind=kind,
        page=page,
        where=where,
        per=per,
        cursor=cursor,
        total=store.sets.total(kind.name),
        now=store.now(),
        scan_limit=paging.SCAN_LIMIT,
    )


@post([f"/{slug}/act" for slug in KINDS], name="set-act")
@threaded
def act(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """One entry (`row` = ACTION:SCORE~KEY) or the selected ones (`action` + `e` fields)."""
    dash = writable(request)
    kind = kind_of(request)
    form = params.form_values(data)
    row = params.one(form, "row")
    if row is not None:
        action_name, _, token = row.partition(":")
        action = action_of({"row": [action_name]}, "row", kind)
        tokens = [token]
    else:
        action = action_of(form, "action", kind)
        tokens = form.get("e", [])
    if len(tokens) > MAX_SELECTED:
        raise ValidationException(f"at most {MAX_SELECTED} entries at once")
    if not tokens:
        return _back(request, kind, form, done="none")
    cursors = [params.parse_cursor(token, "e") for token in tokens]
    views, gone = resolve(dash.store.sets, kind, cursors)
    outcome = apply(dash.store, dash.config, kind, action, views, dash.store.now())
    total_gone = outcome.gone + gone
    return _back(
        request, kind, form, done=action, n=outcome.done, gone=total_gone, skipped=outcome.skipped
    )


def _back(
    request: Request[Any, Any, Any],
    kind: SetKind,
    form: Mapping[str, Sequence[str]],
    **notice: str | int,
) -> Redirect:
    """Back where the form was: the job page it came from, or the set page with its filter."""
    jid = params.jid_ref(form, "back_jid")
    if jid:
        return back(request, "/job", jid=jid, **notice)
    return back(request, f"/{kind.slug}", **filter_of(form).as_query(), **notice)
