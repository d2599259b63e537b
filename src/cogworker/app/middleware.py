"""Client and server middleware chains.

A client middleware wraps every push: it gets the job and `push`, may change
the job (`attrs.evolve`) before passing it on, and may stop the push by not
calling `push` (then the enqueue returns None)::

    def tag_tenant(job: JobRecord, push: Push) -> str | None:
        return push(attrs.evolve(job, extra={**job.extra, "tenant": current_tenant()}))

A client middleware may be an ``async def`` (or an object whose `__call__`
is): it awaits `push`.  An `AsyncClient` awaits it; the sync `Client` runs a
chain holding one on an event loop of its own (`asyncio.run`), so it can't
from a thread whose loop is running (use the `AsyncClient` there).  A sync
middleware in such a chain is handed a `push` that returns the jid at once:
the rest of the chain runs when it has returned, with the job it passed on,
and the enqueue returns what that rest returned (as in `enqueue_many`)::

    async def tag_tenant(job: JobRecord, push: AsyncPush) -> str | None:
        tenant = await tenants.current()
        return await push(attrs.evolve(job, extra={**job.extra, "tenant": tenant}))

A server middleware wraps every run on a worker: it gets a `RunContext` and
`run`, the rest of the chain and then `perform`.  An exception from `run`
is the job's failure; let it propagate unless you mean to swallow it::

    def timed(ctx: RunContext, run: CallNext) -> None:
        started = time.monotonic()
        try:
            run()
        finally:
            metrics.observe(ctx.job.class_name, time.monotonic() - started)

`run(args=[...])` passes other arguments on: the layers inside see them as
`ctx.args` and `perform` is called with them, while the stored job (its
retries, its dead entry, `ctx.job`) keeps the ones it was enqueued with::

    def decrypt(ctx: RunContext, run: CallNext) -> None:
        run(args=[json.loads(fernet.decrypt(ctx.args[0].encode()))])

A server middleware may be an ``async def``: it wraps `async def` jobs only,
on the worker's event loop, and awaits `run`::

    async def timed(ctx: RunContext, run: AsyncCallNext) -> None:
        started = time.monotonic()
        try:
            await run()
        finally:
            metrics.observe(ctx.job.class_name, time.monotonic() - started)

A sync one wraps async jobs too: its `run()` blocks until the job's
coroutine (and the async layers) ended.  For an async job the sync layers
are the outer ones.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, cast

import attrs

from cogworker.domain.job import JobRecord

if TYPE_CHECKING:
    from cogworker.domain.json_values import JSON

Push = Callable[[JobRecord], str | None]
#: What an ``async def`` client middleware is handed: ``await push(job)``.
AsyncPush = Callable[[JobRecord], Awaitable[str | None]]
SyncClientMiddleware: TypeAlias = Callable[[JobRecord, Push], str | None]
AsyncClientMiddleware: TypeAlias = Callable[[JobRecord, AsyncPush], Awaitable[str | None]]
ClientMiddleware: TypeAlias = SyncClientMiddleware | AsyncClientMiddleware


@attrs.frozen(kw_only=True)
class RunContext:
    """What a server middleware knows about the run it wraps."""

    job: JobRecord
    queue: str
    #: The job's class, or None when it can't be imported (the run will fail).
    job_class: type | None
    #: The worker process running it.
    identity: str
    #: The arguments `perform` gets: the job's own, unless an outer layer passed others on.
    args: tuple[JSON, ...] = attrs.field(
        default=attrs.Factory(lambda ctx: ctx.job.args, takes_self=True)
    )


class CallNext(Protocol):
    """The rest of a server chain: call it to go on, with `args=` to pass other arguments."""

    def __call__(self, *, args: Sequence[JSON] | None = None) -> None:
        """Run the next layer (or `perform`), with `args` instead of the context's if given."""


class AsyncCallNext(Protocol):
    """The rest of an async job's chain, for an async middleware: await it to go on."""

    def __call__(self, *, args: Sequence[JSON] | None = None) -> Awaitable[None]:
        """Run the next layer (or `perform`), with `args` instead of the context's if given."""


SyncServerMiddleware: TypeAlias = Callable[[RunContext, CallNext], None]
AsyncServerMiddleware: TypeAlias = Callable[[RunContext, AsyncCallNext], Awaitable[None]]
ServerMiddleware: TypeAlias = SyncServerMiddleware | AsyncServerMiddleware


def is_async_layer(layer: object) -> bool:
    """Whether a middleware (client or server) is an ``async def`` (a function or a
    `__call__`)."""
    call = getattr(layer, "__call__", None)  # noqa: B004  # its __call__, not callable()
    return inspect.iscoroutinefunction(layer) or inspect.iscoroutinefunction(call)


def client_chain(middleware: Sequence[ClientMiddleware], push: Push) -> Push:
    """`push` wrapped by `middleware`, the first entry outermost.

    With an ``async def`` layer among them, the chain runs as
    `async_client_chain`'s, on an event loop of its own for each push.
    """
    if middleware and any(map(is_async_layer, middleware)):
        return _on_own_loop(async_client_chain(middleware, _awaitable(push)))
    for layer in reversed(middleware):
        push = _wrap_client(cast("SyncClientMiddleware", layer), push)
    return push


def _wrap_client(layer: SyncClientMiddleware, push: Push) -> Push:
    return lambda job: layer(job, push)


def async_client_chain(middleware: Sequence[ClientMiddleware], push: AsyncPush) -> AsyncPush:
    """`push` (awaited) wrapped by `middleware`, the first entry outermost."""
    for layer in reversed(middleware):
        push = _wrap_async_client(layer, push)
    return push


def _wrap_async_client(layer: ClientMiddleware, push: AsyncPush) -> AsyncPush:
    if is_async_layer(layer):
        async_layer = cast("AsyncClientMiddleware", layer)
        return lambda job: async_layer(job, push)
    sync_layer = cast("SyncClientMiddleware", layer)

    async def run(job: JobRecord) -> str | None:
        passed: list[JobRecord] = []

        def collect(job: JobRecord) -> str | None:
            passed.append(job)  # as the layer left it; pushed once it has returned
            return job.jid

        result = sync_layer(job, collect)
        if not passed:
            return result  # it stopped the push
        for each in passed:
            result = await push(each)
        return result

    return run


def _awaitable(push: Push) -> AsyncPush:
    async def run(job: JobRecord) -> str | None:
        return push(job)

    return run


def _on_own_loop(chain: AsyncPush) -> Push:
    def push(job: JobRecord) -> str | None:
        async def whole() -> str | None:
            return await chain(job)

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop runs in this thread: one of its own can
            return asyncio.run(whole())
        raise RuntimeError(
            "an async def client middleware can't run in a sync enqueue made from a "
            "thread whose event loop is running; enqueue with cogworker.AsyncClient "
            "(or the aperform_* shortcuts) there"
        )

    return push


def server_chain(
    middleware: Sequence[SyncServerMiddleware],
    ctx: RunContext,
    perform: Callable[[RunContext], None],
) -> CallNext:
    """`perform` wrapped by `middleware` for one job, the first entry outermost."""
    return _next_layer(tuple(middleware), ctx, perform)


def split_layers(
    middleware: Sequence[ServerMiddleware],
) -> tuple[tuple[SyncServerMiddleware, ...], tuple[AsyncServerMiddleware, ...]]:
    """The sync layers and the async ones, each in the configured order."""
    sync: list[SyncServerMiddleware] = []
    async_: list[AsyncServerMiddleware] = []
    for layer in middleware:
        if is_async_layer(layer):
            async_.append(layer)  # type: ignore[arg-type]  # checked just above
        else:
            sync.append(layer)  # type: ignore[arg-type]  # likewise
    return tuple(sync), tuple(async_)


def async_server_chain(
    middleware: Sequence[AsyncServerMiddleware],
    ctx: RunContext,
    perform: Callable[[RunContext], Awaitable[None]],
) -> AsyncCallNext:
    """`perform` (awaited) wrapped by the async `middleware`, the first entry outermost."""
    layers = tuple(middleware)

    def at(index: int, current: RunContext) -> AsyncCallNext:
        async def run(*, args: Sequence[JSON] | None = None) -> None:
            inner = current if args is None else attrs.evolve(current, args=_passed_on(args))
            if index == len(layers):
                await perform(inner)
            else:
                await layers[index](inner, at(index + 1, inner))

        return run

    return at(0, ctx)


def _next_layer(
    layers: tuple[SyncServerMiddleware, ...],
    ctx: RunContext,
    perform: Callable[[RunContext], None],
) -> CallNext:
    """The `run` a layer that got `ctx` is handed: the rest of the chain, from `layers`."""

    def run(*, args: Sequence[JSON] | None = None) -> None:
        inner = ctx if args is None else attrs.evolve(ctx, args=_passed_on(args))
        if not layers:
            perform(inner)
        else:
            layers[0](inner, _next_layer(layers[1:], inner, perform))

    return run


def _passed_on(args: object) -> tuple[JSON, ...]:
    if not isinstance(args, (list, tuple)):
        raise TypeError(
            f"a server middleware passed args={args!r:.80}: a list or tuple of arguments is needed"
        )
    return tuple(args)
