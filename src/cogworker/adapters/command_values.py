"""Redis commands as values: what a cluster's pipeline is, here, until it is sent.

A `Commands` collects the commands queued on it — each one's arguments and
the options that parse its reply, as redis-py builds them (its
`CoreCommands` builds every command out of `execute_command`) — and does no
I/O: `execute` hands them to the sender it was made with, the executor of
its transport (`cluster_client.send`, `async_cluster.send`), which decides
where each goes and what is sent again.  `AsyncCommands` is the same with
an awaited `execute`.  Queuing is the same for both, so it is written once.

Only a cluster's pipelines are these: on one server redis-py's own pipeline
sends its commands on one connection as they are, which is all it must do.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from redis.commands import CoreCommands

#: A queued command: its arguments and its options (what parses its reply).
Command = tuple[Sequence[Any], Mapping[str, Any]]
#: An executor: sends the commands, gives their replies in order (with
#: `raise_on_error` false, a command's error stays in its place).
Send = Callable[[list[Command], bool], list[Any]]
AsyncSend = Callable[[list[Command], bool], Awaitable[list[Any]]]


class _Queued(CoreCommands):
    """Commands queued, in order, and nothing sent."""

    if TYPE_CHECKING:  # what redis.typing's protocol of a sync client, the `self` of
        # redis-py's command builders, asks a type to declare (nothing reads them here)
        _is_async_client: Literal[False]
        _event_dispatcher: Any

    def __init__(self) -> None:
        self.commands: list[Command] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        """Queue a command: this, to queue the next (as a pipeline chains)."""
        self.commands.append((args, options))
        return self

    def __len__(self) -> int:
        return len(self.commands)

    def taken(self) -> list[Command]:
        """The commands queued, which leave this empty."""
        taken, self.commands = self.commands, []
        return taken


class Commands(_Queued):
    """A cluster's pipeline: commands queued, then sent by `send` (see the module)."""

    def __init__(self, send: Send) -> None:
        super().__init__()
        self._send = send

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        """Send the queued commands: their replies, in order."""
        return self._send(self.taken(), raise_on_error)


class AsyncCommands(_Queued):
    """`Commands` of an asyncio cluster client: `execute` is awaited."""

    def __init__(self, send: AsyncSend) -> None:
        super().__init__()
        self._send = send

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        """Send the queued commands: their replies, in order."""
        return await self._send(self.taken(), raise_on_error)


def first_key(args: Sequence[Any]) -> Any:
    """The first key a command's `args` name, which places it on a cluster (every command
    cogworker pipelines keeps to one slot): a script's first KEYS, else the first argument;
    None for a command naming none (TIME; a script given no keys), which any node serves."""
    name = str(args[0], "ascii") if isinstance(args[0], bytes) else str(args[0])
    if name.upper() in ("EVALSHA", "EVAL"):
        return args[3] if int(args[2]) else None
    return args[1] if len(args) > 1 else None
