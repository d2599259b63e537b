"""The queues a merged read goes over.

A global view (the counters, a class's run history) is kept in shares, one
in each queue's slot, written by the script that ends a job there; the
queue is registered in `cogworker:parts` before (`redis_keys.PARTS`).  A
reading merges the shares of the registered queues and of the part of the
empty queue name, where `cogworker migrate` put what the layout before kept
for all queues at once (no queue can be named "", so that part only ever
holds that).
"""

from __future__ import annotations

from collections.abc import Iterable

from cogworker.adapters.replies import as_bytes

#: The part holding what a migration brought from the layout before, for all queues at once.
MIGRATED = ""


def queues(registered: Iterable[bytes | str]) -> tuple[str, ...]:
    """The queues a reading merges: the `registered` parts and the migrated part."""
    names = {as_bytes(part).decode("utf-8", "backslashreplace") for part in registered}
    return tuple(sorted(names | {MIGRATED}))
