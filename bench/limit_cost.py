#!/usr/bin/env python
"""What a job costs at the Redis limit: client CPU, Redis CPU and commands (issue #25, target 5).

    BENCH_PEERS_DIR=PEERS python bench/limit_cost.py --url URL --out FILE [--seconds 5]

The harness's redis_limit.py measures the rate of a job's minimum on a reliable queue
(LPUSH + LMOVE + LREM, pipelined 100 jobs at a time, its `loop_pipelined`) but not what
it spends. This runs the same loop, from 1 and from 2 processes, and takes what the
harness takes of a drain (run.py): each process's CPU time, and Redis's CPU time and
commands from `INFO` before and after; per job, beside the rate. bench/run.sh runs it
after redis_limit.py in each repetition, and limit_report.py puts it beside the drains.
FLUSHALL before each measurement, like redis_limit.py: a private Redis only.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time

import redis
import workload_report  # noqa: F401  (puts the harness on sys.path)

# isort: split
from redis_limit import loop_pipelined  # the harness's, through the path above
from run import redis_cmds, redis_cpu


def one_process(args: tuple[str, float, int]) -> tuple[int, float, float]:
    """The pipelined loop for `seconds` on keys of its own: (jobs, wall s, CPU s)."""
    url, seconds, index = args
    cpu = time.process_time()
    done, wall = loop_pipelined(url, 10**9, seconds, key_suffix=f":cost{index}")
    return done, wall, time.process_time() - cpu


def measure(url: str, seconds: float, processes: int) -> dict[str, float]:
    """Rate and costs per job of the pipelined loop in `processes` processes at once."""
    r = redis.Redis.from_url(url)
    r.flushall()
    cpu0, cmds0 = redis_cpu(r), redis_cmds(r)
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        started = time.perf_counter()
        runs = pool.map(one_process, [(url, seconds, i) for i in range(processes)])
        wall = time.perf_counter() - started
    jobs = sum(done for done, _, _ in runs)
    redis_seconds, cmds = redis_cpu(r) - cpu0, redis_cmds(r) - cmds0
    r.flushall()
    return {
        "jobs": jobs,
        "per_s": jobs / wall,
        "client_cpu_us_per_job": sum(cpu for _, _, cpu in runs) / jobs * 1e6,
        "redis_cpu_us_per_job": redis_seconds / jobs * 1e6,
        "redis_cmds_per_job": cmds / jobs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--url", required=True)
    ap.add_argument("--out", required=True, help="the JSON file to write")
    ap.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    args = ap.parse_args()
    out = {f"pipelined100_{n}proc{'s' if n > 1 else ''}": measure(args.url, args.seconds, n)
           for n in (1, 2)}  # fmt: skip
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
