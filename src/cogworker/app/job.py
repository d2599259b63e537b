"""`Job`: the base class of every job, with the shortcuts that enqueue it through the
default client (`cogworker.configure`); what a job class is lives in `job_base`.

The client side and the worker import `job_base`, never this module, so the clients
this module loads don't import it back.  It loads them at a shortcut's first call, not
on import: a worker imports every job class, and never runs a client (issue #19).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from cogworker.app.job_base import JobBase

if TYPE_CHECKING:
    from cogworker.app.async_client import AsyncClient
    from cogworker.app.client import Client
    from cogworker.domain.json_values import JSON


def _default_client() -> Client:
    from cogworker.app.default_clients import default_client  # at first use (see above)

    return default_client()


async def _default_async_client() -> AsyncClient:
    from cogworker.app.default_clients import default_async_client  # at first use (see above)

    return await default_async_client()


class Job(JobBase):
    """Subclass it and define `perform`; options go in the class statement::

        class SendEvent(Job, queue="events", retry=10):
            def perform(self, event_id: int) -> None: ...

    The hooks and options are `JobBase`'s; this class adds `perform_async`,
    `perform_in`, `perform_at` and their `aperform_*` twins for async code.
    """

    @classmethod
    def perform_async(
        cls,
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Enqueue a run with `args` through the configured client; the jid (None if stopped).

        `jid`: your own id for the run, which makes repeating the call safe (see
        `Client.enqueue`); `expires_in`/`expires_at`: drop it unrun if it hasn't
        started by then."""
        return _default_client().enqueue(
            cls, *args, jid=jid, expires_in=expires_in, expires_at=expires_at
        )

    @classmethod
    def perform_in(
        cls,
        seconds: float,
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Enqueue a run `seconds` from now (`expires_in` counts from then)."""
        return _default_client().enqueue_in(
            seconds, cls, *args, jid=jid, expires_in=expires_in, expires_at=expires_at
        )

    @classmethod
    def perform_at(
        cls,
        at: float | dt.datetime,
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None:
        """Enqueue a run at `at` (a unix timestamp or an aware datetime; `expires_in`
        counts from then)."""
        return _default_client().enqueue_at(
            at, cls, *args, jid=jid, expires_in=expires_in, expires_at=expires_at
        )

    @classmethod
    async def aperform_async(cls, *args: JSON, jid: str | None = None) -> str | None:
        """`perform_async` for async code: enqueue through the running event loop's
        `AsyncClient`, made from the config given to `cogworker.configure`."""
        return await (await _default_async_client()).enqueue(cls, *args, jid=jid)

    @classmethod
    async def aperform_in(cls, seconds: float, *args: JSON, jid: str | None = None) -> str | None:
        """`perform_in` for async code (see `aperform_async`)."""
        return await (await _default_async_client()).enqueue_in(seconds, cls, *args, jid=jid)

    @classmethod
    async def aperform_at(
        cls, at: float | dt.datetime, *args: JSON, jid: str | None = None
    ) -> str | None:
        """`perform_at` for async code (see `aperform_async`)."""
        return await (await _default_async_client()).enqueue_at(at, cls, *args, jid=jid)
