"""How links and forms name a queue, so every queue the Queues page lists can be opened.

A queue is named by its name when the name travels through a query or a form
as it is; else (control or invisible characters, more than
`domain.queues.LONGEST_NAME` characters, spaces at an end: names written
before the rule, or by hand) by `#` and a digest of it, which the route
finds again among the registered queues.
"""

from __future__ import annotations

import hashlib

from litestar.exceptions import NotFoundException

from cogworker.adapters.dashboard_queues import QueueStore
from cogworker.domain.queues import LONGEST_NAME


def queue_ref(name: str) -> str:
    """What a link or a form sends to name the queue `name`."""
    plain = (
        0 < len(name) <= LONGEST_NAME
        and name.isprintable()
        and name == name.strip()
        and not name.startswith("#")
    )
    return name if plain else "#" + hashlib.sha256(name.encode()).hexdigest()[:20]


def named_queue(queues: QueueStore, ref: str) -> str:
    """The queue `ref` names; a digest no registered queue has is a 404."""
    if not ref.startswith("#"):
        return ref
    found = next((name for name in queues.names() if queue_ref(name) == ref), None)
    if found is None:
        raise NotFoundException(f"no registered queue is {ref}")
    return found
