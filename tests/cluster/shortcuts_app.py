"""The APP of a cluster worker whose jobs enqueue with the shortcuts (`jobs.ChainAsync`):
`jobs.config`, also given to `cogworker.configure`.  Neither names a Redis: the worker's
`$COGWORKER_REDIS_URL` says which, for the worker and the shortcuts alike."""

from __future__ import annotations

import cogworker
from tests.cluster.jobs import config

cogworker.configure(config)

__all__ = ["config"]
