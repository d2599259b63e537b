"""How links and forms name a queue or a job class, so that every one a page lists opens.

A name travels as it is when a query or a form carries it unchanged; else
(control or invisible characters, longer than a parameter may be, spaces at
an end: queues named before the rule or by hand, classes from any payload)
as `#` and a digest of it, which the route finds again among the names it
knows (the registered queues, the classes with metrics).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from urllib.parse import quote

from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.domain.queues import LONGEST_NAME

#: The longest job class name a link carries as it is (module path included).
LONGEST_CLASS_NAME = 500


def name_ref(name: str, longest: int) -> str:
    """What a link or a form sends to name `name` (as it is if at most `longest` long)."""
    plain = (
        0 < len(name) <= longest
        and name.isprintable()
        and name == name.strip()
        and not name.startswith("#")
    )
    return name if plain else "#" + hashlib.sha256(name.encode()).hexdigest()[:20]


def named(ref: str, names: Callable[[], Iterable[str]], longest: int, what: str) -> str:
    """The name `ref` stands for among `names()` (read only for a digest); a digest none
    of them has is a 404 saying it is no `what`."""
    if not ref.startswith("#"):
        return ref
    found = next((name for name in names() if name_ref(name, longest) == ref), None)
    if found is None:
        # Imported here: the inspecting commands use this module's refs, never Litestar.
        from litestar.exceptions import NotFoundException

        raise NotFoundException(f"no {what} is {ref}")
    return found


def queue_ref(name: str) -> str:
    """What a link or a form sends to name the queue `name`."""
    return name_ref(name, LONGEST_NAME)


def named_queue(queues: QueueStore, ref: str) -> str:
    """The queue `ref` names; a digest no registered queue has is a 404."""
    return named(ref, queues.names, LONGEST_NAME, "registered queue")


def jid_ref(jid: str) -> str:
    """What a form's hidden field sends to name the job `jid`: percent-encoded, so that any
    jid comes back exactly (a form rewrites line breaks, and a page shows control
    characters escaped); `params.jid_ref` reads it."""
    return quote(jid, safe="")


def class_ref(name: str) -> str:
    """What a link sends to name the job class `name`."""
    return name_ref(name, LONGEST_CLASS_NAME)
