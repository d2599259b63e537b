"""Death hooks: what runs once a job is in dead for good.

First the job class's own `retries_exhausted`, then every
`Config.death_handlers` entry in order; each gets its own copy of the dead
entry and runs on its own (one that raises is logged and stops nothing).
Called only by whoever's write filed the job (so at most once per death),
after that write, and from a processor only once the job is acknowledged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import attrs

from cogworker.adapters import user_hooks
from cogworker.app.config import DeathHandler
from cogworker.domain.json_values import JSON


@attrs.frozen(kw_only=True)
class DeathNotice:
    """A job just filed in dead: its entry as stored, what killed it, its class if loadable."""

    entry: Mapping[str, JSON]
    exception: BaseException
    job_class: type | None


def notify(notice: DeathNotice, handlers: Sequence[DeathHandler], logger: logging.Logger) -> None:
    """Run the class hook (if the class loaded and has one), then each handler."""
    class_hook = getattr(notice.job_class, "retries_exhausted", None)
    hooks = ([("retries_exhausted", class_hook)] if class_hook else []) + [
        ("death handler", handler) for handler in handlers
    ]
    for what, hook in hooks:
        user_hooks.run_death_hook(what, hook, notice.entry, notice.exception, logger)
