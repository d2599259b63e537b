"""The banner an action leaves: what was done, and what was already gone.

An action redirects to a page with `done=ACTION&n=..&gone=..&skipped=..`;
the page turns those (checked like any parameter) into one sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
KEYS = ("done", "n", "gone", "skipped", "cancelled", *_REFUSALS)
_LIMIT = 10_000_000


_PLURALS = {
    "job": "jobs",
    "process": "processes",
    "entry": "entries",
    "queue": "queues",
    "periodic job": "periodic jobs",
}


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun if count == 1 else _PLURALS[noun]}"


def sentence(values: Mapping[str, Sequence[str]]) -> str | None:
    """The banner's text for the query, or None if no action was reported."""
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
