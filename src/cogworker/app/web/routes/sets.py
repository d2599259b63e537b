"""Scheduled, Retries and Dead: filtered pages by cursor, row and bulk actions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from litestar import Request, get, post
from litestar.exceptions import NotFoundException, ValidationException
from litestar.response import Redirect, Template

from cogworker.app.web import paging, params
from cogworker.app.web.context import (
    Dashboard,
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


def _kind(request: Request[Any, Any, Any]) -> SetKind:
    slug = request.url.path.strip("/").split("/")[0]
    if slug not in KINDS:
        raise NotFoundException()
    return KINDS[slug]


def _filter(values: Mapping[str, Sequence[str]]) -> Filter:
    return Filter(
        class_name=params.text(values, "class"),
        queue=params.text(values, "queue"),
        jid=params.text(values, "jid"),
        error=params.text(values, "error"),
    )


def _action(values: Mapping[str, Sequence[str]], name: str, kind: SetKind) -> Action:
    return cast("Action", params.choice(values, name, kind.actions, kind.actions[0]))


@get(PAGES, name="set")
@threaded
def set_page(request: Request[Any, Any, Any]) -> Template:
    """A page of a set, filtered, from a cursor (its live part when polled)."""
    kind = _kind(request)
    query = query_of(request)
    where = _filter(query)
    per = int(params.choice(query, "per", PER_PAGE, PER_PAGE[0]))
    cursor = params.cursor(query, "after")
    store = dashboard(request).store
    page = paging.page_of(
        store.sets, kind.key, descending=kind.descending, cursor=cursor, where=where, per=per
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
        total=store.sets.size(kind.key),
        now=store.now(),
        scan_limit=paging.SCAN_LIMIT,
    )


@post([f"/{slug}/act" for slug in KINDS], name="set-act")
@threaded
def act(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """One entry (`row` = ACTION:SCORE~KEY) or the selected ones (`action` + `e` fields)."""
    dash = writable(request)
    kind = _kind(request)
    form = params.form_values(data)
    row = params.one(form, "row")
    if row is not None:
        action_name, _, token = row.partition(":")
        action = _action({"row": [action_name]}, "row", kind)
        tokens = [token]
    else:
        action = _action(form, "action", kind)
        tokens = form.get("e", [])
    if len(tokens) > MAX_SELECTED:
        raise ValidationException(f"at most {MAX_SELECTED} entries at once")
    if not tokens:
        return _back(dash, kind, form, done="none")
    cursors = [params.parse_cursor(token, "e") for token in tokens]
    views, gone = resolve(dash.store.sets, kind, cursors)
    outcome = apply(dash.store, dash.config, kind, action, views, dash.store.now())
    total_gone = outcome.gone + gone
    return _back(
        dash, kind, form, done=action, n=outcome.done, gone=total_gone, skipped=outcome.skipped
    )


def _back(
    dash: Dashboard, kind: SetKind, form: Mapping[str, Sequence[str]], **notice: str | int
) -> Redirect:
    """Back where the form was: the job page it came from, or the set page with its filter."""
    jid = params.text(form, "back_jid")
    if jid:
        return back(dash, "/job", jid=jid, **notice)
    return back(dash, f"/{kind.slug}", **_filter(form).as_query(), **notice)


@get([f"/{slug}/bulk" for slug in KINDS], name="set-bulk-confirm")
@threaded
def bulk_confirm(request: Request[Any, Any, Any]) -> Template:
    """The confirmation of an action on all matching entries, stating their count."""
    kind = _kind(request)
    query = query_of(request)
    action = _action(query, "action", kind)
    where = _filter(query)
    store = dashboard(request).store
    found = paging.matching(store.sets, kind.key, descending=kind.descending, where=where)
    return render(
        request,
        "confirm_bulk",
        title=f"{action.title()} all matching?",
        kind=kind,
        action=action,
        where=where,
        found=found,
        total=store.sets.size(kind.key),
        limit=paging.BULK_LIMIT,
    )


@post([f"/{slug}/bulk" for slug in KINDS], name="set-bulk")
@threaded
def bulk(request: Request[Any, Any, Any], data: Form) -> Redirect:
    """Do the action on the entries matching the filter, up to where the confirmation counted."""
    dash = writable(request)
    kind = _kind(request)
    form = params.form_values(data)
    action = _action(form, "action", kind)
    found = paging.matching(
        dash.store.sets,
        kind.key,
        descending=kind.descending,
        where=_filter(form),
        start=params.cursor(form, "from"),
        through=params.cursor(form, "through"),
    )
    outcome = apply(dash.store, dash.config, kind, action, found.views, dash.store.now())
    return _back(
        dash, kind, form, done=action, n=outcome.done, gone=outcome.gone, skipped=outcome.skipped
    )
