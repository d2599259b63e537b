"""`Config`: everything a client or a worker needs to know, as one immutable record."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Literal

import attrs

from cogworker.adapters.jobs.retention import Retention
from cogworker.adapters.redis_target import (
    TLS_VERIFY_MODES,
    RedisTarget,
    Sentinels,
    Tls,
    TlsVerify,
)
from cogworker.app import config_checks as checks
from cogworker.app.middleware import ClientMiddleware, ServerMiddleware
from cogworker.app.periodic import Periodic
from cogworker.app.redis_settings import (
    DEFAULT_REDIS_URL,
    REDIS_URL_ENV,
    TLS_FIELDS,
    parsed_url,
    sentinel_addresses,
)
from cogworker.domain.class_cap import DEFAULT_LIMIT as DEFAULT_MAX_CLASSES
from cogworker.domain.queues import QueuePlan, plan_of
from cogworker.domain.results import DEFAULT_MAX_BYTES as DEFAULT_MAX_RESULT_BYTES
from cogworker.domain.settlement import Keeping
from cogworker.exceptions import ConfigError

DeathHandler = Callable[..., object]
"""Called as `handler(job, exception)` (or with fewer arguments) when a job lands in dead."""


@attrs.frozen(kw_only=True)
class Config:
    """How cogworker connects, what a worker serves, and its timings (seconds).

    Build one in your app module and hand it to `Client`, to
    `cogworker.configure` (for the `perform_async` shortcuts) and to
    `cogworker work APP`.  Change one with `attrs.evolve(config, ...)`.
    """

    #: None: `$COGWORKER_REDIS_URL`, else the default URL (where `cogworker
    #: work` starts an embedded Redis if nothing listens there).
    redis_url: str | None = attrs.field(
        default=None, validator=checks.redis_url, repr=checks.masked_repr
    )
    #: The ACL user and its password; each, when given, wins over the URL's.
    redis_username: str | None = None
    redis_password: str | None = attrs.field(default=None, repr=False)
    #: TLS (a rediss:// URL, or any of these with `sentinels`): the CA to trust
    #: (None: the system's), a client certificate and its key, and the checks
    #: ("full": chain and host name; "ca": chain only; "none").  Each wins over
    #: the URL's option of the same name (`?tls_ca_file=...`).
    redis_tls_ca_file: str | None = None
    redis_tls_cert_file: str | None = None
    redis_tls_key_file: str | None = None
    redis_tls_verify: TlsVerify | None = attrs.field(
        default=None, validator=attrs.validators.optional(checks.one_of(*TLS_VERIFY_MODES))
    )
    #: Redis Cluster: the URL's server (a redis:// or rediss:// URL, database 0) is one of
    #: the cluster's nodes, which names the others.  A redis+cluster:// URL needs no flag.
    #: See docs/redis-cluster.md ("Running on a cluster").
    redis_cluster: bool = False
    #: Sentinel, instead of `redis_url`: the sentinels' (host, port) pairs and the
    #: name of the master they watch (database 0; a redis+sentinel:// URL can say another).
    sentinels: tuple[tuple[str, int], ...] = attrs.field(default=(), converter=sentinel_addresses)
    sentinel_master: str | None = None
    #: The sentinels' own ACL user and password (each wins over the URL's option).
    sentinel_username: str | None = None
    sentinel_password: str | None = attrs.field(default=None, repr=False)
    #: Durable writes: every enqueue and every job outcome is followed by Redis's
    #: `WAIT`, until this many replicas have it or `replica_timeout` seconds
    #: (at most 3) have passed.  An enqueue that reached fewer raises
    #: `EnqueueNotReplicatedError`; a worker logs it and carries on.  None: the
    #: URL's `?min_replicas=` / `?replica_timeout=`, else 0 (off) and 1 second.
    #: See docs/production-redis.md.
    min_replicas: int | None = attrs.field(default=None, validator=checks.replicas)
    replica_timeout: float | None = attrs.field(default=None, validator=checks.replica_timeout)
    #: Jobs run at once by one worker process (its processor threads).
    concurrency: int = attrs.field(default=10, validator=checks.count(1))
    #: `async def` jobs run at once by one worker process, on its event loop
    #: (besides the `concurrency` threads); 0: this worker refuses async jobs.
    async_concurrency: int = attrs.field(default=100, validator=checks.count(0))
    #: Seconds an async job may block the event loop (sync code instead of
    #: awaiting) before the worker logs a warning naming what ran; 0: never.
    async_block_warning: float = attrs.field(default=1.0, validator=checks.not_negative)
    #: Jobs a worker may fetch ahead of its free threads, so several share a
    #: round trip (faster with many short jobs).  They wait in the process
    #: meanwhile, and if it dies they are recovered (and counted toward
    #: `max_orphanings`) like its running jobs.  0: fetch only for idle threads.
    prefetch: int = attrs.field(default=0, validator=checks.count(0))
    #: Queue names in priority order, or `"name,weight"` / `(name, weight)` for weighted.
    queues: tuple[str | tuple[str, int], ...] = attrs.field(
        default=("default",), converter=tuple, validator=checks.queues
    )
    #: `"reliable"`: a job stays in the worker's in-progress list until settled.
    #: `"basic"`: popped outright (faster, lost if the process dies mid-job).
    fetch: Literal["reliable", "basic"] = attrs.field(
        default="reliable", validator=checks.one_of("reliable", "basic")
    )
    #: Average pause between looks for due scheduled and retry jobs.
    poll_interval: float = attrs.field(default=5.0, validator=checks.positive)
    heartbeat_interval: float = attrs.field(default=5.0, validator=checks.positive)
    #: A process whose heartbeat is older than this is gone; its jobs are requeued.
    orphan_threshold: float = attrs.field(default=60.0, validator=checks.positive)
    #: A job whose process died under it more often than this goes to dead.
    max_orphanings: int = attrs.field(default=3, validator=checks.count(1))
    #: A job still running when its worker stopped (handed back unfinished,
    #: run again from the start) more often than this goes to dead: a hung
    #: job can't block a queue across restarts forever.  Generous, because
    #: deploys restart workers while legit long jobs run.
    max_handbacks: int = attrs.field(default=10, validator=checks.count(1))
    #: On stop, how long running jobs get to finish before they are requeued.
    shutdown_timeout: float = attrs.field(default=25.0, validator=checks.positive)
    #: A job's time limit when its class sets none (`timeout=`): at it, `JobTimeoutError`
    #: is raised into the job.  None: no limit.
    default_timeout: float | None = attrs.field(default=None, validator=checks.seconds)
    #: How long a job past its limit may ignore the `JobTimeoutError` (blocked in C code)
    #: before its process files the failure for it, and exits to be replaced.
    timeout_grace: float = attrs.field(default=10.0, validator=checks.seconds)
    #: With several queues, the longest pause between looks when all are empty.
    fetch_idle_max_interval: float = attrs.field(default=0.1, validator=checks.positive)
    dead_max_jobs: int = attrs.field(default=10_000, validator=checks.count(1))
    dead_max_age: float = attrs.field(default=180 * 86_400.0, validator=checks.positive)
    #: How long a unique job's lock lasts (a class's `unique_for` overrides it).
    unique_lock_ttl: float = attrs.field(default=3600.0, validator=checks.positive)
    #: How long a periodic job's running lock outlives the last heartbeat of its process.
    periodic_lock_ttl: float = attrs.field(default=60.0, validator=checks.positive)
    # --- periodic jobs (app/periodic.py, app/worker/periodic_manager.py) ---
    #: Jobs run on a cron schedule; each tick is enqueued by exactly one worker process.
    periodic: tuple[Periodic, ...] = attrs.field(
        default=(), converter=tuple, validator=checks.periodic
    )
    #: What ticks missed while no worker looked get: "none", the "last" one, or "all"
    #: (the latest `periodic_catch_up_limit`), run one after another.
    periodic_catch_up: Literal["none", "last", "all"] = attrs.field(
        default="last", validator=checks.one_of("none", "last", "all")
    )
    periodic_catch_up_limit: int = attrs.field(default=10, validator=checks.count(1))
    #: At start-up, True: `periodic` replaces the stored schedule (entries not in it are
    #: removed); False: merged into it.  A config without periodic jobs leaves it alone.
    periodic_replace: bool = True
    # --- end of periodic jobs ---
    #: Track every job's status (else only classes with `track_status=True`).
    track_status: bool = False
    #: A status expires this long after its last change.
    status_expiry: float = attrs.field(default=30 * 60.0, validator=checks.positive)
    #: Record every run (start, end, outcome, process, error) per job and per class.
    history: bool = True
    history_per_job: int = attrs.field(default=25, validator=checks.count(1))
    history_per_class: int = attrs.field(default=100, validator=checks.count(1))
    #: A job's history expires this long after its last run.
    history_ttl: float = attrs.field(default=86_400.0, validator=checks.positive)
    #: Count every run in its class's metrics: runs, failures, execution time and a histogram
    #: of run times, per minute and per hour (docs/metrics.md).
    metrics: bool = True
    #: Per-class metrics expire this long after their last run.
    metrics_retention: float = attrs.field(default=72 * 3600.0, validator=checks.positive)
    #: The most job classes `/metrics` exports series of and the Metrics page lists: those
    #: that ran last (a scrape's size and commands grow with it; docs/metrics.md).
    metrics_max_classes: int = attrs.field(default=DEFAULT_MAX_CLASSES, validator=checks.count(1))
    #: Seconds every job's result is kept for `Client.result` (a class's `keep_result`
    #: overrides it); None: only classes with `keep_result` keep one (docs/results.md).
    keep_result: float | None = attrs.field(default=None, validator=checks.seconds)
    #: The largest return value a result holds (bytes of its JSON); a larger one fails the run.
    max_result_bytes: int = attrs.field(default=DEFAULT_MAX_RESULT_BYTES, validator=checks.count(1))
    client_middleware: tuple[ClientMiddleware, ...] = attrs.field(default=(), converter=tuple)
    server_middleware: tuple[ServerMiddleware, ...] = attrs.field(default=(), converter=tuple)
    death_handlers: tuple[DeathHandler, ...] = attrs.field(default=(), converter=tuple)
    #: The modules (and the modules under them) a worker may import job classes
    #: from; a job naming a class elsewhere fails without an import.  None: any.
    job_modules: tuple[str, ...] | None = attrs.field(default=None, converter=checks.module_names)
    log_level: str = attrs.field(
        default="INFO", validator=checks.one_of("DEBUG", "INFO", "WARNING", "ERROR")
    )
    #: `"text"` (key=value) or `"json"` (one object per line).
    log_format: Literal["text", "json"] = attrs.field(
        default="text", validator=checks.one_of("text", "json")
    )

    @property
    def queue_plan(self) -> QueuePlan:
        """The queues with their weights."""
        return plan_of(self.queues)

    @property
    def keeping(self) -> Keeping:
        """What a settlement records and holds (see `domain.settlement.Keeping`)."""
        return Keeping(
            track_all=self.track_status,
            history=self.history,
            unique_lock_ttl=self.unique_lock_ttl,
            metrics=self.metrics,
        )

    @property
    def retention(self) -> Retention:
        """What the dead set, the attempts log, the history and statuses keep."""
        return Retention(
            dead_max_jobs=self.dead_max_jobs,
            dead_max_age=self.dead_max_age,
            attempts_ttl=self.dead_max_age,
            history_per_job=self.history_per_job,
            history_per_class=self.history_per_class,
            history_ttl=self.history_ttl,
            status_ttl=self.status_expiry,
            metrics_ttl=self.metrics_retention,
        )

    def __attrs_post_init__(self) -> None:
        _check_sentinel_fields(self)
        if self.redis_url or self.sentinels or self.redis_cluster:
            self.redis_target()  # its ConfigError now, not at the first connection
        if self.heartbeat_interval >= self.orphan_threshold:
            raise ConfigError(
                f"Config.heartbeat_interval ({self.heartbeat_interval!r}) must be below "
                f"orphan_threshold ({self.orphan_threshold!r}), or every process looks gone"
            )

    def redis_target(self) -> RedisTarget:
        """The Redis to connect to: the URL (this config's, else `$COGWORKER_REDIS_URL`,
        else the default) or the sentinels, completed by the other Redis fields.

        A setting that can't work (a malformed `$COGWORKER_REDIS_URL`, TLS files
        for a plain URL) is a ConfigError naming it.
        """
        return _target_of(self)

    def redis_is_configured(self) -> bool:
        """Whether a Redis was named (then it's never swapped for an embedded one)."""
        named = self.redis_url or self.sentinels or self.redis_cluster
        return bool(named or os.environ.get(REDIS_URL_ENV))


def _url_and_setting(config: Config) -> tuple[str, str]:
    """The Redis URL in use and where it comes from, as a person would set it."""
    if config.redis_url:
        return config.redis_url, "Config.redis_url"
    from_environment = os.environ.get(REDIS_URL_ENV)
    if from_environment:
        return from_environment, f"${REDIS_URL_ENV}"
    return DEFAULT_REDIS_URL, "the default Redis URL"


def _check_sentinel_fields(config: Config) -> None:
    """Raise ConfigError if `Config.sentinels` and its companions don't fit together."""
    if config.sentinels and config.redis_url:
        raise ConfigError("Config.redis_url and Config.sentinels both say where Redis is: give one")
    if bool(config.sentinels) != bool(config.sentinel_master):
        raise ConfigError(
            "Config.sentinels and Config.sentinel_master go together (a redis+sentinel:// "
            "URL names its master itself)"
        )


def _target_of(config: Config) -> RedisTarget:
    """The Redis `config` names, completed by its Redis fields.

    The URL (`Config.redis_url`, else `$COGWORKER_REDIS_URL`, else the default)
    says where; `Config.sentinels` with `sentinel_master` says it instead.
    `Config.redis_cluster` makes a redis:// or rediss:// URL's server the start-up
    node of a Redis Cluster (a redis+cluster:// URL says so itself).  The other
    Redis fields complete it, and a field given wins over the same part of the URL
    (its password, a TLS option).  Whatever can't work is a ConfigError naming the
    setting, before anything connects.
    """
    if config.sentinels:
        sentinels = Sentinels(addresses=config.sentinels, master=config.sentinel_master or "")
        target = RedisTarget(setting="Config.sentinels", sentinels=sentinels)
    else:
        url, setting = _url_and_setting(config)
        target = parsed_url(setting, url)
    if config.redis_cluster:
        target = _as_cluster(target)
    target = attrs.evolve(
        target,
        username=_given(config.redis_username, target.username),
        password=_given(config.redis_password, target.password),
    )
    target = _with_replication(target, config)
    return _with_sentinel_credentials(_with_tls(target, config), config)


def _as_cluster(target: RedisTarget) -> RedisTarget:
    """`target`'s server as a cluster's start-up node (`Config.redis_cluster`)."""
    if target.sentinels is not None or target.path is not None:
        raise ConfigError(
            f"Config.redis_cluster needs a redis:// or rediss:// URL naming one of the "
            f"cluster's nodes, not {target.described()}"
        )
    if target.db != 0:
        raise ConfigError(
            f"Config.redis_cluster: a Redis Cluster has only database 0, not {target.db} "
            f"({target.described()})"
        )
    return attrs.evolve(target, cluster=target.cluster or ((target.host, target.port),))


def _given(field: Any, from_url: Any) -> Any:
    return from_url if field is None else field


def _with_replication(target: RedisTarget, config: Config) -> RedisTarget:
    replication = attrs.evolve(
        target.replication,
        replicas=_given(config.min_replicas, target.replication.replicas),
        timeout=_given(config.replica_timeout, target.replication.timeout),
    )
    return attrs.evolve(target, replication=replication)


def _with_tls(target: RedisTarget, config: Config) -> RedisTarget:
    given = {
        name: getattr(config, field)
        for name, field in TLS_FIELDS.items()
        if getattr(config, field) is not None
    }
    if not given:
        return target
    if target.tls is None and not config.sentinels:
        field = TLS_FIELDS[next(iter(given))]
        raise ConfigError(
            f"Config.{field} is set, but {target.described()} doesn't use TLS "
            "(rediss:// or rediss+sentinel://)"
        )
    return attrs.evolve(target, tls=attrs.evolve(target.tls or Tls(), **given))


def _with_sentinel_credentials(target: RedisTarget, config: Config) -> RedisTarget:
    if config.sentinel_username is None and config.sentinel_password is None:
        return target
    if target.sentinels is None:
        raise ConfigError(
            f"Config.sentinel_username / sentinel_password are set, but {target.described()} "
            "names no sentinels (redis+sentinel://HOST:PORT,.../MASTER)"
        )
    sentinels = attrs.evolve(
        target.sentinels,
        username=_given(config.sentinel_username, target.sentinels.username),
        password=_given(config.sentinel_password, target.sentinels.password),
    )
    return attrs.evolve(target, sentinels=sentinels)
