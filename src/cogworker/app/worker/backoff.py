"""Back-off for the runtime's loops while Redis is away: logged, bounded, never busy."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import attrs
import redis

from cogworker.adapters import redis_access


@attrs.define
class Backoff:
    """Delays that double from `initial` to `maximum` while an operation keeps failing."""

    what: str
    logger: logging.Logger
    initial: float = 0.05
    maximum: float = 2.0
    _delay: float = 0.0
    _failures: int = 0

    def failed(self, error: BaseException) -> float:
        """Note a failure; the seconds to wait before trying again.

        A Redis error is the expected kind, logged in a line; anything else
        is a bug or a job's doing, logged with its traceback.
        """
        self._failures += 1
        self._delay = min(self.maximum, self._delay * 2 if self._delay else self.initial)
        if self._failures == 1 or self._delay < self.maximum or self._failures % 30 == 0:
            expected = isinstance(error, redis.RedisError)
            self.logger.log(
                logging.WARNING if expected else logging.ERROR,
                "%s failed (%s); trying again in %.2fs",
                self.what,
                redis_access.not_redis(error) or f"{type(error).__name__}: {error}",
                self._delay,
                exc_info=None if expected else error,
                extra={"reason": "redis-unavailable" if expected else "internal-error"},
            )
        return self._delay

    def succeeded(self) -> None:
        """Note a success: the next failure starts from `initial` again."""
        if self._failures:
            self.logger.info("%s works again after %d failures", self.what, self._failures)
        self._delay = 0.0
        self._failures = 0


def repeat(
    step: Callable[[], float],
    *,
    what: str,
    logger: logging.Logger,
    until: threading.Event,
    first_delay: float = 0.0,
    maximum: float = 2.0,
    on_failure: Callable[[], None] | None = None,
) -> None:
    """Call `step` until `until` is set; `step` returns the pause before its next call.

    An error from `step` is logged and backed off (up to `maximum` seconds),
    then `step` is tried again: a housekeeping loop never dies of Redis being
    away nor of a bad turn (a job's data it can't handle, a bug), and never
    spins while it lasts.
    """
    backoff = Backoff(what, logger, maximum=maximum)
    delay = first_delay
    while not until.wait(delay):
        try:
            delay = step()
            backoff.succeeded()
        except Exception as error:  # see above: the loop outlives it
            if on_failure is not None:
                on_failure()
            delay = backoff.failed(error)
