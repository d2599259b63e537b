"""Django's database connections around each job, as Django handles them around a request.

Django closes a connection that outlived `CONN_MAX_AGE` or broke when a
request starts and ends (`close_old_connections`, on its request signals).
A worker thread has no requests: without this it would keep its first
connection for ever, and once the database dropped it (a restart, an idle
timeout) every later job of that thread would fail.
"""

from __future__ import annotations

from django.db import close_old_connections

from cogworker.app.middleware import CallNext, RunContext


def close_stale_connections(ctx: RunContext, run: CallNext) -> None:
    """A server middleware: close this thread's stale connections before and after the run."""
    close_old_connections()
    try:
        run()
    finally:
        close_old_connections()
