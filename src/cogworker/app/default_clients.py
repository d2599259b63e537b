"""The default clients the `perform_async` shortcuts use: the `Client` that `configure`
sets up, and from its config one `AsyncClient` per event loop, closed with its loop."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncGenerator

import attrs

from cogworker.app.async_client import AsyncClient
from cogworker.app.client import Client
from cogworker.app.config import Config

_default: Client | None = None
_default_lock = threading.Lock()


def configure(config: Config) -> Client:
    """Make `config` the one `Job.perform_async` and friends use (and `aperform_async` and
    friends, through an `AsyncClient` per event loop); returns its client."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
        _default = Client(config)
        return _default


def status(jid: str) -> str | None:
    """A tracked job's status through the configured client (see `Client.status`)."""
    return default_client().status(jid)


def default_client() -> Client:
    """The client `configure` set up (or one for a default `Config` on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Client(Config())
        return _default


@attrs.frozen
class _LoopDefault:
    """The default client of one event loop, and what closes it when the loop ends."""

    client: AsyncClient
    closer: AsyncGenerator[None, None]


_defaults: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopDefault] = (
    weakref.WeakKeyDictionary()
)
_defaults_lock = threading.Lock()


async def default_async_client() -> AsyncClient:
    """The running event loop's client for the `aperform_*` shortcuts.

    It is made from the config given to `cogworker.configure` at its first
    use on this loop (again after `configure` is called anew, the old one
    closed), and closed when the loop ends: when its runner shuts its async
    generators down, as `asyncio.run` (and so uvicorn) does.
    """
    loop = asyncio.get_running_loop()
    config = default_client().config
    with _defaults_lock:
        current = _defaults.get(loop)
        if current is not None and current.client.config is config:
            return current.client
        made = AsyncClient(config)
        closer = _closed_with_loop(loop, made)
        _defaults[loop] = _LoopDefault(made, closer)
    # Started now, the generator is one its loop closes at shutdown: then it closes `made`.
    await anext(closer)
    if current is not None:
        await current.closer.aclose()
    return made


async def _closed_with_loop(
    loop: asyncio.AbstractEventLoop, client: AsyncClient
) -> AsyncGenerator[None, None]:
    """Waits, suspended, until closed (by `loop`'s shutdown), then forgets and closes
    `client`.

    asyncio has no hook for a loop's end; `shutdown_asyncgens` closing every
    suspended async generator is the documented step that comes nearest.
    """
    try:
        yield
    finally:
        with _defaults_lock:
            current = _defaults.get(loop)
            if current is not None and current.client is client:
                del _defaults[loop]
        await client.aclose()
