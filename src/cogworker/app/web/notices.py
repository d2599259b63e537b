"""The banner an action leaves: what was done, and what was already gone.

An action redirects to a page with `done=ACTION&n=..&gone=..&skipped=..`
and their seal, `sig`: an HMAC, under the dashboard's secret, of those
values, the page's path and the browser's CSRF cookie.  The page turns
them (checked like any parameter) into one sentence only if the seal
holds, so a crafted link (`/dead?done=delete&n=10000000`) shows nothing,
and a link sealed for one browser shows nothing in another.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

from cogworker.app.web import params

#: action -> (verb, noun) of the sentence.
ACTIONS = {
    "retry": ("Retried", "job"),
    "enqueue": ("Enqueued", "job"),
    "kill": ("Killed", "job"),
    "delete": ("Deleted", "job"),
    "clear": ("Deleted", "job"),
    "quiet": ("Asked to quiet", "process"),
    "resume": ("Asked to resume", "process"),
    "stop": ("Asked to stop", "process"),
    "pause": ("Paused", "queue"),
    "unpause": ("Resumed", "queue"),
    "remove": ("Removed", "periodic job"),
    "none": ("Selected", "job"),
}
#: Why "Enqueue now" enqueued nothing, by the key that says so.
_REFUSALS = {
    "running": "Not enqueued: its previous run is still queued or running.",
    "unique": "Not enqueued: another job holds its unique lock.",
    "stopped": "Not enqueued: a client middleware stopped it.",
}
#: What a cancel did (`cancelled=` a `CancelResult` value) -> its banner.
CANCELS = {
    "removed": "Cancelled: the job was taken off before it ran.",
    "signalled": "Cancel sent: the process running the job will stop it at its next heartbeat.",
    "not found": "Nothing to cancel: no such job was found.",
    "already finished": "Nothing to cancel: the job had already finished.",
}
#: The parameters a notice is made of (sealed together).
_SEALED = ("done", "n", "gone", "skipped", "cancelled", *_REFUSALS)
#: The parameters of a notice and its seal (a poll leaves them out).
KEYS = (*_SEALED, "sig")
_LIMIT = 10_000_000


def sealed(
    key: bytes, browser: str, path: str, query: Mapping[str, str | int]
) -> dict[str, str | int]:
    """`query` (a redirect's to `path`), with the seal of its notice if it has one.

    `browser`: the CSRF cookie of the browser the redirect is for.
    """
    notice = [(name, str(query[name])) for name in _SEALED if query.get(name, "") != ""]
    return {**query, "sig": _seal(key, browser, path, notice)} if notice else dict(query)


def _seal(key: bytes, browser: str, path: str, notice: list[tuple[str, str]]) -> str:
    message = "\n".join((browser, path, urlencode(notice)))
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def _is_sealed(values: Mapping[str, Sequence[str]], key: bytes, browser: str, path: str) -> bool:
    """Whether the notice in `values` carries its seal for this browser and path."""
    notice = [(name, value) for name in _SEALED for value in values.get(name, ())]
    given = values.get("sig", [])
    if len(given) != 1 or not browser:
        return False
    return hmac.compare_digest(given[0], _seal(key, browser, path, notice))


_PLURALS = {
    "job": "jobs",
    "process": "processes",
    "entry": "entries",
    "queue": "queues",
    "periodic job": "periodic jobs",
}


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun if count == 1 else _PLURALS[noun]}"


def sentence(
    values: Mapping[str, Sequence[str]], key: bytes, browser: str, path: str
) -> str | None:
    """The banner's text for the query of a page at `path` in `browser` (its CSRF
    cookie), or None if no action was reported, or the report isn't sealed for them."""
    if not _is_sealed(values, key, browser, path):
        return None
    cancelled = params.choice(values, "cancelled", (*CANCELS, ""), "")
    if cancelled:
        return CANCELS[cancelled]
    action = params.choice(values, "done", (*ACTIONS, ""), "")
    if not action:
        return None
    done = params.integer(values, "n", 0, _LIMIT, 0)
    gone = params.integer(values, "gone", 0, _LIMIT, 0)
    skipped = params.integer(values, "skipped", 0, _LIMIT, 0)
    verb, noun = ACTIONS[action]
    if action == "none":
        return "Nothing was selected."
    parts = [f"{verb} {_plural(done, noun)}."]
    if gone:
        was = "was" if gone == 1 else "were"
        already = "had already exited" if noun == "process" else f"{was} already gone"
        parts.append(f"{_plural(gone, noun)} {already}.")
    if skipped:
        parts.append(f"{_plural(skipped, 'entry')} skipped: not a job payload with a queue.")
    parts += [text for key, text in _REFUSALS.items() if params.integer(values, key, 0, 1, 0)]
    return " ".join(parts)
