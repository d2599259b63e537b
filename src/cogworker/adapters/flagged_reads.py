"""Reading keys that may not hold what cogworker writes, so a page flags the one bad item.

A key of the wrong type (a queue someone SET by hand) or a value cogworker
never writes (a counter reading "abc") must not take a whole page down: a
read goes through a pipeline that leaves Redis's refusal in place of its
reply, and `Flags` turns each refusal or odd value into a sentence naming
the key, for the page to show where the item would be.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import redis

from cogworker.adapters.redis_client import RedisPipeline
from cogworker.adapters.replies import as_bytes

_WHOLE_NUMBER = re.compile(rb"-?\d{1,20}")


def count_of(value: object) -> int | None:
    """A counter as Redis holds it (a missing key is 0), or None if it isn't a whole number."""
    if value is None:
        return 0
    if isinstance(value, bytes | str) and _WHOLE_NUMBER.fullmatch(as_bytes(value)):
        return int(value)
    return None


def replies(pipe: RedisPipeline) -> list[Any]:
    """A pipeline's replies; a command Redis refused (WRONGTYPE, say) stays as its error."""
    return list(pipe.execute(raise_on_error=False))


def refusal(key: str, reply: object, kind: str) -> str | None:
    """What is wrong with the reply of a read of `key` as a `kind` ("list", "hash"...), or None."""
    if not isinstance(reply, redis.ResponseError):
        return None
    if str(reply).startswith("WRONGTYPE"):
        return f"{key} is not a {kind}"
    return f"{key} can't be read as a {kind}: {reply}"


@attrs.define
class Flags:
    """The problems met while reading a page's keys, in the order met."""

    problems: list[str] = attrs.field(factory=list)

    def checked(self, key: str, reply: object, kind: str) -> Any | None:
        """`reply`, or None (noted) if Redis refused it."""
        problem = refusal(key, reply, kind)
        if problem is None:
            return reply
        self.problems.append(problem)
        return None

    def count(self, key: str, reply: object) -> int | None:
        """A counter's reply as a count (a missing key is 0), or None (noted) if it isn't one."""
        if self.checked(key, reply, "string") is None and reply is not None:
            return None
        count = count_of(reply)
        if count is None:
            self.problems.append(f"{key} holds {reply!r:.60}, not a count")
        return count
