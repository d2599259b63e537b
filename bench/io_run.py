#!/usr/bin/env python
"""The I/O-bound workload (issue #19), measured with the shared peer harness's driver.

    bash bench/run.sh --workload io          # what calls this, once per target and repetition
    BENCH_PEERS_DIR=PEERS python bench/io_run.py --url URL --libs arq_io:p2j100poll05 --out DIR

The harness's run.py knows only its own job kinds ("noop", "lat"); this
driver runs its pieces (adapter loading, the drain with its CPU, RSS and
Redis counters) on the "io" job of bench/io_work.py: wait 10 ms, then the
completion INCR.  Per target (adapter `<lib>_io_bench.py` here : variant),
one repetition, FLUSHALL before each phase:

1. client (only for asyncio clients): N jobs through the library's normal
   enqueue call, awaited from 100 concurrent tasks taking the next job
   number from one shared iterator; jobs/s, and the driver's CPU per job;
2. drain: N jobs queued untimed (the adapter's `FillClient` if it has one,
   else its `Client`; bulk API, else 100-wide gather, else one by one), then
   the harness's `run.drain`: spawn the workers, time to the N-th completion.

Results are appended to DIR/<lib>-<variant>.json in run.py's format (so the
harness's report.load reads them) with `enqueue_tasks_rate`,
`enqueue_cpu_us_per_job`, `worker_processes` and `errors` (phase -> the
exception): a phase that fails is recorded, printed, and makes the exit
status 1; nothing is skipped silently.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

import redis
import workload_driver  # puts the harness and this folder on sys.path

# isort: split
import common  # the harness's modules, found through the path above
import io_work
import run

TASKS = 100  # concurrent enqueueing tasks in the client phase


def parse_args() -> argparse.Namespace:
    ap = workload_driver.arguments(__doc__)
    ap.add_argument("--phases", default="client,drain")
    ap.add_argument(
        "--label",
        default="",
        help="appended to the variant in the results (run.sh --base: 'p2a100@REV')",
    )
    return ap.parse_args()


async def enqueue_from_tasks(client, kind: str, n: int) -> None:
    """`n` awaited enqueues, from TASKS tasks sharing one iterator of job numbers."""
    numbers = iter(range(n))

    async def one_task() -> None:
        for number in numbers:
            await client.aenqueue(kind, number)

    await asyncio.gather(*(one_task() for _ in range(TASKS)))


def client_phase(mod, variant: str, args, r) -> dict | None:
    """Enqueue rate from TASKS tasks (None: the adapter's client is not asyncio)."""
    if not issubclass(mod.Client, common.AsyncClient):
        return None
    r.flushall()
    client = mod.Client(args.url, variant)
    try:
        steal = run.cpu_stat()
        cpu0, t0 = time.process_time(), time.perf_counter()
        # the harness's way to run one phase on the client's loop (inside its session)
        client._run(lambda: enqueue_from_tasks(client, io_work.KIND, args.n))
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    finally:
        client.close()
    return {
        "enqueue_tasks_rate": args.n / wall,
        "enqueue_cpu_us_per_job": cpu / args.n * 1e6,
        "enqueue_tasks_steal_pct": run.steal_pct(steal),
    }


def drain_phase(mod, variant: str, args, r) -> dict:
    r.flushall()
    workload_driver.fill(mod, variant, args.url, args.n, io_work.KIND)
    logpath = os.path.join(args.out, "logs", f"{mod.NAME}-{variant}.log")
    return run.drain(mod, variant, args.url, r, args.n, logpath, args.drain_timeout)


def run_phase(name: str, measure, res: dict) -> None:
    """Record what `measure()` returns into res, or its exception under res["errors"]."""
    got = workload_driver.attempt(name, measure, res)
    if name == "drain" and got is not None:
        res["drain"] = got
        print(
            f"  drain {got['drain_rate']:,.0f}/s, final {got['final_count_after_stop']}", flush=True
        )
    elif got is not None:
        res.update(got)
        print(f"  enqueue from {TASKS} tasks {got['enqueue_tasks_rate']:,.0f}/s", flush=True)


def run_one(mod, variant: str, args) -> bool:
    """One repetition of one target, appended to its JSON file; False if a phase failed."""
    r = redis.Redis.from_url(args.url)
    res = {
        "lib": mod.NAME,
        "variant": variant + args.label,
        "n": args.n,
        "workload": f"io: {io_work.WAIT_SECONDS * 1000:.0f} ms wait + INCR per job",
        "config": mod.describe(variant),
        "worker_processes": io_work.PROCESSES,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "errors": {},
    }
    phases = args.phases.split(",")
    if "client" in phases:
        run_phase("client", lambda: client_phase(mod, variant, args, r), res)
    if "drain" in phases:
        run_phase("drain", lambda: drain_phase(mod, variant, args, r), res)
    return workload_driver.finish(r, args.out, f"{mod.NAME}-{variant}{args.label}", res)


def main() -> None:
    workload_driver.run_targets(parse_args(), io_work.KIND, run_one)


if __name__ == "__main__":
    main()
