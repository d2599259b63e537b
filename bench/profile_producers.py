#!/usr/bin/env python
"""Where do 50 threads sharing one cogworker Client spend their time?  (py-spy)

    bash bench/run.sh --profile --workload producers [--variant p2c10] [--n 100000] [-- --gil]

(run.sh starts the private Redis and calls this with --url and --peers-dir).
It runs the many-producers workload's 50-thread phase alone
(`producers_run.py --phases threads`, cogworker's client) under `py-spy
record`, writes py-spy's raw collapsed stacks and a summary to --out and
prints the summary (bench/profile_drain.py's):

* by default every thread is sampled, blocked or not (py-spy --idle): the
  summary says what the producer threads were doing or waiting for (a
  push's round trip, a lock, running Python or waiting for the GIL);
* --gil samples only the thread holding the GIL: where the process's
  Python CPU goes.

The profiler slows the process: the rate printed here is not a benchmark
figure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from profile_drain import profile_arguments, pyspy_path, report

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args() -> argparse.Namespace:
    ap = profile_arguments(__doc__)
    ap.add_argument("--variant", default="p2c10", help="cogworker_bench's configuration")
    ap.add_argument("--gil", action="store_true", help="only the thread holding the GIL")
    return ap.parse_args()


def main() -> None:
    args = parse_args()
    pyspy = pyspy_path()
    os.makedirs(args.out, exist_ok=True)
    raw = os.path.join(args.out, f"pyspy-producers-{args.variant}.txt")
    producers = [
        sys.executable, os.path.join(HERE, "producers_run.py"), "--url", args.url,
        "--libs", f"cogworker_producers:{args.variant}", "--n", str(args.n),
        "--phases", "threads", "--out", os.path.join(args.out, "run"),
    ]  # fmt: skip
    spy = [
        pyspy, "record", "--rate", str(args.rate), "--threads", "--gil" if args.gil else "--idle",
        "--format", "raw", "--output", raw, "--", *producers,
    ]  # fmt: skip
    subprocess.run(spy, env=dict(os.environ, BENCH_PEERS_DIR=args.peers_dir), check=True)
    args.idle = not args.gil
    sampled = "the thread holding the GIL" if args.gil else "every thread, idle or not"
    heading = (
        f"cogworker_producers:{args.variant}: {args.n} enqueues from 50 threads sharing one "
        f"Client, sampled at {args.rate}/s: {sampled}"
    )
    report([heading], raw, args, f"pyspy-producers-{args.variant}-summary.txt")


if __name__ == "__main__":
    main()
