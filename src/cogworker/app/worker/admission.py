"""What a worker checks before and as it starts: that Redis holds this code's key layout
and takes its credentials (else it stops: no wait would help), and which fixed keys hold
the wrong type (logged: the loops using them fail until fixed)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import redis

from cogworker.adapters import key_guard, redis_access
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.layout_store import LayoutStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.adapters.redis_client import RedisClient
from cogworker.adapters.redis_target import RedisTarget
from cogworker.app.worker.backoff import Backoff
from cogworker.app.worker.stopping import SETTING_EXIT
from cogworker.domain.layout_verdicts import refusal


def register(
    client: RedisClient,
    beat: Callable[[], object],
    target: RedisTarget,
    logger: logging.Logger,
    stop_requested: threading.Event,
) -> bool:
    """Check the layout, then `beat` (the registration), waiting out a Redis that is away;
    False if asked to stop meanwhile.  A lasting refusal (the credentials, an ACL
    permission, the database index) or a key layout other than this code's stops the
    process: no wait would help.

    Raises SystemExit(SETTING_EXIT) on such a refusal.
    """
    backoff = Backoff("registering with Redis", logger, maximum=5.0)
    while not stop_requested.is_set():
        try:
            check_layout(client, logger)
            beat()
            return True
        except redis.RedisError as error:
            refused = redis_access.lasting_refusal(error)
            if refused is not None:
                logger.error(
                    "%s: %s; stopping: only a changed setting can help",
                    target.described(),
                    refused,
                    extra={"reason": "redis-refused"},
                )
                raise SystemExit(SETTING_EXIT) from None
            stop_requested.wait(backoff.failed(error))
    return False


def check_layout(client: RedisClient, logger: logging.Logger) -> None:
    """Go on only if Redis holds this code's key layout (a fresh Redis is given it): on an
    older one this process would miss the keys it looks for."""
    for wrong in key_guard.wrong_types(client, key_guard.LAYOUT_TYPE):
        logger.error("KeyGuard: %s; stopping", wrong, extra={"reason": "layout"})
        raise SystemExit(SETTING_EXIT)
    problem = refusal(LayoutStore(client).admit())
    if problem is not None:
        logger.error("%s; stopping", problem, extra={"reason": "layout"})
        raise SystemExit(SETTING_EXIT)


def report_wrong_keys(
    client: RedisClient, registry: ProcessRegistry, logger: logging.Logger
) -> None:
    """Log each fixed key (and registered process's key) of the wrong type."""
    try:
        wrong = key_guard.wrong_types(client, key_guard.expected_types(()))
        if all(problem.key != keys.PROCESSES for problem in wrong):
            identities = tuple(registry.identities())
            wrong += key_guard.wrong_types(client, key_guard.process_types(identities))
    except redis.RedisError:
        return  # Redis away: every loop backs off and says so
    for problem in wrong:
        logger.error("KeyGuard: %s; the loops using it will fail until fixed", problem)
