#!/usr/bin/env python
"""The many-producers workload (issue #25 target 4), measured with the shared peer harness.

    bash bench/run.sh --workload producers   # what calls this, once per target and repetition
    BENCH_PEERS_DIR=PEERS python bench/producers_run.py --url URL --libs rq_producers --out DIR

A target `<lib>_producers:<variant>` is the harness's (or bench/'s) success
workload adapter `<lib>` and its no-op job: no worker runs, only its
`Client`. Per target, one repetition, FLUSHALL and a new client before each
phase (as the harness's own enqueue phases):

1. single: N enqueues from one thread (`Client.enqueue_each`, the harness's
   single enqueue), for comparison in the same run;
2. threads: THREADS threads (bench/producers_work.py) share ONE client and
   take the next job number from one shared iterator; timed from their
   release (a barrier) to the last enqueue returning.

Each phase records jobs/s, this process's CPU per job (every thread's),
Redis's CPU and commands per job and, where the adapter can count them
(`pending(r)`), the jobs found queued afterwards. Results are appended to
DIR/<lib>-<variant>.json in run.py's format with `errors` (phase -> the
exception): a failed phase is recorded, printed, and makes the exit status 1.
A library whose client threads can't share is refused with the reason.
"""

from __future__ import annotations

import argparse
import threading
import time
from functools import partial

import redis
import workload_driver  # puts the harness and this folder on sys.path

# isort: split
import producers_work  # found through the path above
import run

KIND = "noop"
SUFFIX = "_producers"


def parse_args() -> argparse.Namespace:
    ap = workload_driver.arguments(__doc__)
    ap.add_argument("--phases", default="single,threads", help="which phases, in order")
    ap.add_argument(
        "--label",
        default="",
        help="appended to the variant in the results (run.sh --base: 'p2c10@REV')",
    )
    args = ap.parse_args()
    args.libs = ",".join(adapter_target(t) for t in args.libs.split(",") if t.strip())
    return args


def adapter_target(target: str) -> str:
    """`rq_producers:simple` -> `rq:simple`, the adapter it runs; a library whose client
    threads can't share is an error saying why."""
    name, sep, variant = target.strip().partition(":")
    lib = name.removesuffix(SUFFIX)
    if lib in producers_work.NOT_SHARED:
        raise SystemExit(f"{target}: not in this workload: {producers_work.NOT_SHARED[lib]}")
    if name == lib or lib not in producers_work.SHARED:
        raise SystemExit(f"{target}: targets are <lib>{SUFFIX}:<variant>, <lib> one of "
                         f"{', '.join(producers_work.SHARED)}")  # fmt: skip
    return lib + sep + variant


def from_threads(client, n: int, threads: int) -> float:
    """`n` enqueues of the no-op from `threads` threads sharing `client`; when the threads
    were released to start (perf_counter). The first exception of any thread is raised
    here (the others finish the numbers left)."""
    numbers = iter(range(n))
    errors: list[BaseException] = []

    def one_thread() -> None:
        try:
            for number in numbers:
                client.enqueue(KIND, number)
        except BaseException as error:  # re-raised in the driver's thread below
            errors.append(error)

    released: list[float] = []
    started = threading.Barrier(threads, action=lambda: released.append(time.perf_counter()))
    workers = [
        threading.Thread(target=lambda: (started.wait(), one_thread())) for _ in range(threads)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    return released[0]


def timed(mod, variant: str, args, r, enqueue) -> dict:
    """One phase: FLUSHALL, a new client, `enqueue(client)` timed (from the moment it
    returns, if any: when its enqueues began); its figures."""
    r.flushall()
    client = mod.Client(args.url, variant)
    try:
        redis_cpu0, cmds0, steal = run.redis_cpu(r), run.redis_cmds(r), run.cpu_stat()
        cpu0, t0 = time.process_time(), time.perf_counter()
        began = enqueue(client) or t0
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu0
        cmds = run.redis_cmds(r) - cmds0 - 2  # less the INFOs that read the counts
        redis_cpu = run.redis_cpu(r) - redis_cpu0
    finally:
        client.close()
    pending = getattr(mod, "pending", None)
    return {
        "rate": args.n / wall,
        "cpu_us_per_job": cpu / args.n * 1e6,
        "redis_cmds_per_job": cmds / args.n,
        "redis_cpu_us_per_job": redis_cpu / args.n * 1e6,
        "queued_after": pending(r) if pending else None,
        "steal_pct": run.steal_pct(steal),
    }


def run_one(mod, variant: str, args) -> bool:
    """One repetition of one target, appended to its JSON file; False if a phase failed."""
    r = redis.Redis.from_url(args.url)
    threads = producers_work.THREADS
    res = {
        "lib": mod.NAME,
        "variant": variant + args.label,
        "n": args.n,
        "threads": threads,
        "workload": f"producers: {threads} threads sharing one client enqueue N no-op jobs",
        "config": producers_work.SHARED[mod.NAME],
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "errors": {},
    }
    phases = {
        "single": lambda client: client.enqueue_each(KIND, range(args.n)),
        "threads": lambda client: from_threads(client, args.n, threads),
    }
    for name in args.phases.split(","):
        enqueue = phases[name]
        got = workload_driver.attempt(name, partial(timed, mod, variant, args, r, enqueue), res)
        if got is not None:
            res[name] = got
            print(f"  {name}: {got['rate']:,.0f}/s, {got['cpu_us_per_job']:,.0f} µs CPU/job",
                  flush=True)  # fmt: skip
    return workload_driver.finish(r, args.out, f"{mod.NAME}-{variant}{args.label}", res)


def main() -> None:
    workload_driver.run_targets(parse_args(), KIND, run_one)


if __name__ == "__main__":
    main()
