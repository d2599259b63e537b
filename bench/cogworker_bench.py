"""cogworker adapter for the shared peer benchmark harness (shared/bench/peers).

Same interface as the harness's adapters/*_bench.py.  The harness finds this
file through BENCH_ADAPTER_PATH (see bench/run.sh) and imports it as the
top-level module `cogworker_bench`, in the driver and in every worker, so
the job classes are `cogworker_bench.Noop` / `cogworker_bench.Lat` on both
sides.

Workers: one `cogworker work cogworker_bench:<config>` per OS process (the
harness starts and counts each process itself, as it does for the peers,
rather than `--processes N`), started through a tiny `-c`
bootstrap that puts this folder on sys.path first: the harness starts
workers with cwd = its own folder and PYTHONPATH = its own folder, and
`cogworker work` only adds the cwd.
"""

from __future__ import annotations

import os
import sys

import attrs
import common

import cogworker
from cogworker.adapters import redis_keys

NAME = "cogworker"
HERE = os.path.dirname(os.path.abspath(__file__))
QUEUE = "bench"

# variant -> (worker processes, threads per process, fetch mode, prefetch)
VARIANTS = {
    "p2c10": (2, 10, "reliable", 0),  # the default: Config() defaults (concurrency 10, reliable)
    # the best found (bench/README.md, tuning): short jobs share round trips
    "p2c20pf40": (2, 20, "reliable", 40),
    "p2c10pf20": (2, 10, "reliable", 20),  # defaults + prefetch 20
    "p2c10basic": (2, 10, "basic", 0),  # BRPOP, no in-progress list: lost if a process dies
    # tuning: fewer or more threads, with and without prefetch
    "p2c2pf20": (2, 2, "reliable", 20),
    "p2c4pf20": (2, 4, "reliable", 20),
    "p2c50pf100": (2, 50, "reliable", 100),
    "p2c25": (2, 25, "reliable", 0),
    "p2c50": (2, 50, "reliable", 0),
    "p1c20": (1, 20, "reliable", 0),  # one process: is the second process worth it?
}
#: Variants without per-class metrics (`Config(metrics=False)`): the cost of the metrics.
NO_METRICS = "nometrics"
VARIANTS.update({f"{name}{NO_METRICS}": VARIANTS[name] for name in ("p2c10", "p2c20pf40")})
#: Variants whose no-op keeps its result, or runs under a concurrency limit it never
#: reaches (#24): the cost of each against the plain drain (bench/README.md).
KEEP_RESULT, NEVER_REACHED_LIMIT = "keep", "limit"
#: Variants whose no-op is `unique="until_executed"` (each job's arguments its own, so no
#: duplicate is refused), or has its status tracked (#25 target 3: their cost).
UNIQUE, TRACKED = "unique", "tracked"
VARIANTS.update(
    {
        f"p2c10{kind}": VARIANTS["p2c10"]
        for kind in (KEEP_RESULT, NEVER_REACHED_LIMIT, UNIQUE, TRACKED)
    }
)


def _config(variant: str, url: str | None = None) -> cogworker.Config:
    _, threads, fetch, prefetch = VARIANTS[variant]
    return cogworker.Config(
        redis_url=url or common.redis_url(),
        concurrency=threads,
        prefetch=prefetch,
        queues=(QUEUE,),
        fetch=fetch,
        log_level="WARNING",
        metrics=not variant.endswith(NO_METRICS),
    )


def _attr(variant: str) -> str:
    return f"config_{variant}"


# One module attribute per variant, for `cogworker work cogworker_bench:config_<variant>`.
for _variant in VARIANTS:
    globals()[_attr(_variant)] = _config(_variant)
config = globals()[_attr(next(iter(VARIANTS)))]  # `cogworker work cogworker_bench`


class Noop(cogworker.Job, queue=QUEUE):
    def perform(self, i: int) -> None:
        common.mark_done()


class Lat(cogworker.Job, queue=QUEUE):
    def perform(self, enqueued_us: int) -> None:
        common.record_latency(enqueued_us)


class KeptNoop(cogworker.Job, queue=QUEUE, keep_result=600):
    def perform(self, i: int) -> int:
        common.mark_done()
        return i


class LimitedNoop(cogworker.Job, queue=QUEUE, limit=cogworker.Concurrency(max=1000)):
    def perform(self, i: int) -> None:
        common.mark_done()


class UniqueNoop(cogworker.Job, queue=QUEUE, unique="until_executed"):
    def perform(self, i: int) -> None:
        common.mark_done()


class TrackedNoop(cogworker.Job, queue=QUEUE, track_status=True):
    def perform(self, i: int) -> None:
        common.mark_done()


JOBS = {"noop": Noop, "lat": Lat}
#: The no-op each flow-control (or unique, tracked) variant runs instead of `Noop`.
NOOP_OF = {
    KEEP_RESULT: KeptNoop, NEVER_REACHED_LIMIT: LimitedNoop, UNIQUE: UniqueNoop,
    TRACKED: TrackedNoop,
}  # fmt: skip

_BOOT = (
    "import sys; sys.path.insert(0, {here!r}); sys.argv[0] = 'cogworker'; "
    "from cogworker.app.cli import main; main()"
)


def describe(variant: str) -> str:
    p, c, fetch, prefetch = VARIANTS[variant]
    return (
        f"{p} x `cogworker work cogworker_bench:{_attr(variant)}` "
        f"(Config(concurrency={c}, prefetch={prefetch}, queues=('{QUEUE}',), fetch='{fetch}', "
        f"log_level='WARNING'{', metrics=False' if variant.endswith(NO_METRICS) else ''}), "
        f"other settings default; {c} processor threads + fetcher, heartbeat, poller, reconciler)"
        + _flow_control_note(variant)
    )


def _flow_control_note(variant: str) -> str:
    return next(
        (
            f"; the no-op is {job.__name__}"
            for kind, job in NOOP_OF.items()
            if variant.endswith(kind)
        ),
        "",
    )


def worker_command(app: str, url: str) -> list[str]:
    """One `cogworker work APP` process, this folder first on its sys.path."""
    return [sys.executable, "-c", _BOOT.format(here=HERE), "work", app, "--redis-url", url]


def worker_commands(url: str, variant: str) -> list[list[str]]:
    p = VARIANTS[variant][0]
    return [worker_command(f"cogworker_bench:{_attr(variant)}", url) for _ in range(p)]


class Client(common.SyncClient):
    BULK_API = f"Client.enqueue_many, one round trip per {common.BULK_BATCH} jobs"
    #: job kind -> class (bench/cogworker_io*_bench.py have their own)
    jobs: dict[str, type[cogworker.Job]] = JOBS

    def __init__(self, url: str, variant: str):
        super().__init__(url, variant)
        self.client = cogworker.Client(self.config(url))
        for kind, job in NOOP_OF.items():
            if variant.endswith(kind):
                self.jobs = {**self.jobs, "noop": job}

    def config(self, url: str) -> cogworker.Config:
        return attrs.evolve(_config(self.variant), redis_url=url)

    def enqueue(self, kind: str, arg: int) -> None:
        self.client.enqueue(self.jobs[kind], arg)

    def enqueue_bulk(self, kind: str, args) -> None:
        job = self.jobs[kind]
        for part in common.chunks(list(args), common.BULK_BATCH):
            self.client.enqueue_many(job, [[a] for a in part])

    def close(self) -> None:
        self.client.close()


def pending(r) -> int:
    """Jobs not finished: still queued, or on some process's in-progress list.

    Exact for reliable fetch.  With basic fetch a popped, running job is on
    no list, so this undercounts by at most the jobs running at that moment.
    """
    total = r.llen(redis_keys.queue(QUEUE))
    for key in r.scan_iter(match="cogworker:inprogress:*", count=1000):
        total += r.llen(key)
    return total
