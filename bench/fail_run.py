#!/usr/bin/env python
"""The failing workload (issue #25), measured with the shared peer harness's driver.

    bash bench/run.sh --workload fail        # what calls this, once per target and repetition
    BENCH_PEERS_DIR=PEERS python bench/fail_run.py --url URL --libs huey_fail:process2 --out DIR

Per target (adapter `<lib>_fail_bench.py` here : variant), one repetition:
FLUSHALL, N failing jobs (bench/fail_work.py) queued untimed (bulk API,
else 100-wide gather, else one by one), then the harness's `run.drain`:
spawn the workers and time until every job has failed once and been filed
for a retry, counted by the adapter's `filed(r)` (the harness's drain
watches "jobs pending" = N - filed, its mode for libraries' own counts).
Recorded beside run.drain's figures: `attempts`, the jobs' INCRs when the
last job was filed (above N: jobs that ran again, their retry due within
the drain; None: not all were filed).

Results are appended to DIR/<lib>-<variant>.json in run.py's format, with
`errors` (phase -> the exception): a failed phase is recorded, printed, and
makes the exit status 1.
"""

from __future__ import annotations

import argparse
import os
import time
import types

import redis
import workload_driver  # puts the harness and this folder on sys.path

# isort: split
import fail_work  # found through the path above
import run


def parse_args() -> argparse.Namespace:
    ap = workload_driver.arguments(__doc__)
    ap.add_argument(
        "--label",
        default="",
        help="appended to the variant in the results (run.sh --base: 'p2c10@REV')",
    )
    return ap.parse_args()


def failing_drain(mod, variant: str, args, r) -> dict:
    r.flushall()
    workload_driver.fill(mod, variant, args.url, args.n, fail_work.KIND)
    if mod.filed(r):
        raise RuntimeError(f"{mod.filed(r)} jobs filed for retry before any worker ran")
    # run.drain in its "library's own count" mode: pending = the jobs not filed yet;
    # the attempts are read once, when the last job is filed (workers keep running
    # until stopped, and a retry may come due meanwhile)
    at_end: dict[str, int] = {}

    def pending(r) -> int:
        left = args.n - mod.filed(r)
        if left <= 0 and not at_end:
            at_end["attempts"] = int(r.get(fail_work.ATTEMPTS_KEY) or 0)
        return left

    target = types.SimpleNamespace(worker_commands=mod.worker_commands, pending=pending)
    logpath = os.path.join(args.out, "logs", f"{mod.NAME}-{variant}{args.label}.log")
    got = run.drain(target, variant, args.url, r, args.n, logpath, args.drain_timeout, True)
    got["count_mode"] = "jobs filed for retry (the adapter's filed(r))"
    got["attempts"] = at_end.get("attempts")
    return got


def run_one(mod, variant: str, args) -> bool:
    """One repetition of one target, appended to its JSON file; False if it failed."""
    r = redis.Redis.from_url(args.url)
    res = {
        "lib": mod.NAME,
        "variant": variant + args.label,
        "n": args.n,
        "workload": "fail: INCR, then raise; the library's retry filed",
        "config": mod.describe(variant),
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "errors": {},
    }
    got = workload_driver.attempt("drain", lambda: failing_drain(mod, variant, args, r), res)
    if got is not None:
        res["drain"] = got
        print(
            f"  failing drain {got['drain_rate']:,.0f}/s, filed {got['final_count_after_stop']}, "
            f"attempts {got['attempts']}",
            flush=True,
        )
    return workload_driver.finish(r, args.out, f"{mod.NAME}-{variant}{args.label}", res)


def main() -> None:
    workload_driver.run_targets(parse_args(), fail_work.KIND, run_one)


if __name__ == "__main__":
    main()
