"""A worker's reconciler on its own, for tests that run its passes by hand."""

from __future__ import annotations

import logging

import redis

import cogworker
from cogworker.adapters.jobs.handover import HandoverStore
from cogworker.adapters.jobs.recover import RecoverStore
from cogworker.adapters.jobs.run import RunStore
from cogworker.adapters.jobs.settle import SettleStore
from cogworker.adapters.process_registry import ProcessRegistry
from cogworker.app.worker.reconciler import Reconciler
from cogworker.app.worker.state import WorkerState


def reconciler(rc: redis.Redis, config: cogworker.Config) -> Reconciler:
    """A reconciler of a process named "reconciling", on `rc`, with `config`'s settings."""
    return Reconciler(
        HandoverStore(SettleStore(rc)),
        RecoverStore(rc),
        RunStore(rc),
        ProcessRegistry(rc),
        config,
        WorkerState(identity="reconciling"),
        logging.getLogger("test"),
    )
