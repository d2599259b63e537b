"""Either client, `Client` or `AsyncClient`, behind one blocking interface, for tests
parametrized over the two (`CLIENT_KINDS`, the `either_client` fixture).

The AsyncClient runs on an event loop of its own, kept for the client's life, so its
connections live across calls as an application's would (a failover in between is
followed, not sidestepped by a fresh client).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Sequence
from typing import Any, Literal, Protocol, TypeVar, get_args

import cogworker
from cogworker.app.cancelling import CancelResult
from cogworker.domain.json_values import JSON

T = TypeVar("T")
ClientKind = Literal["Client", "AsyncClient"]
#: The two clients a test can be parametrized over.
CLIENT_KINDS: tuple[ClientKind, ...] = get_args(ClientKind)


class EitherClient(Protocol):
    """What tests call on either client."""

    def enqueue(
        self,
        job_class: type[cogworker.Job],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None: ...

    def enqueue_in(
        self,
        seconds: float,
        job_class: type[cogworker.Job],
        *args: JSON,
        jid: str | None = None,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> str | None: ...

    def enqueue_many(
        self,
        job_class: type[cogworker.Job],
        args_list: Iterable[Sequence[JSON]],
        *,
        expires_in: float | None = None,
        expires_at: float | None = None,
    ) -> list[str | None]: ...

    def cancel(self, jid: str) -> CancelResult: ...

    def status(self, jid: str) -> str | None: ...

    def result(self, jid: str, timeout: float | None = None) -> JSON: ...

    def close(self) -> None: ...


class BlockingAsyncClient:
    """An AsyncClient called from blocking code, on one event loop of its own."""

    def __init__(self, config: cogworker.Config) -> None:
        self._loop = asyncio.new_event_loop()
        self._client = self._run(_made(config))

    def enqueue(
        self, job_class: type[cogworker.Job], *args: JSON, jid: str | None = None, **expiry: Any
    ) -> str | None:
        """`AsyncClient.enqueue`, awaited."""
        return self._run(self._client.enqueue(job_class, *args, jid=jid, **expiry))

    def enqueue_in(
        self,
        seconds: float,
        job_class: type[cogworker.Job],
        *args: JSON,
        jid: str | None = None,
        **expiry: Any,
    ) -> str | None:
        """`AsyncClient.enqueue_in`, awaited."""
        return self._run(self._client.enqueue_in(seconds, job_class, *args, jid=jid, **expiry))

    def enqueue_many(
        self, job_class: type[cogworker.Job], args_list: Iterable[Sequence[JSON]], **expiry: Any
    ) -> list[str | None]:
        """`AsyncClient.enqueue_many`, awaited."""
        return self._run(self._client.enqueue_many(job_class, args_list, **expiry))

    def cancel(self, jid: str) -> CancelResult:
        """`AsyncClient.cancel`, awaited."""
        return self._run(self._client.cancel(jid))

    def status(self, jid: str) -> str | None:
        """`AsyncClient.status`, awaited."""
        return self._run(self._client.status(jid))

    def result(self, jid: str, timeout: float | None = None) -> JSON:
        """`AsyncClient.result`, awaited."""
        return self._run(self._client.result(jid, timeout))

    def close(self) -> None:
        """Close the client, then its loop."""
        try:
            self._run(self._client.aclose())
        finally:
            self._loop.close()

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(call)


async def _made(config: cogworker.Config) -> cogworker.AsyncClient:
    return cogworker.AsyncClient(config)  # made on its loop, which it then belongs to


def client_of(kind: str, config: cogworker.Config) -> EitherClient:
    """A client of `kind` (one of CLIENT_KINDS) for `config`."""
    return BlockingAsyncClient(config) if kind == "AsyncClient" else cogworker.Client(config)
