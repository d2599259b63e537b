"""What the drivers of bench's own workloads share (bench/io_run.py, bench/fail_run.py).

The harness's run.py runs only its own job kinds ("noop", "lat"); these
drivers run its pieces (adapter loading, `run.drain` with its CPU, RSS and
Redis counters) on another kind of job. Importing this module puts the
harness (BENCH_PEERS_DIR, which bench/run.sh sets) and this folder on
sys.path.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS_DIR = os.environ.get("BENCH_PEERS_DIR", "")
if not os.path.isfile(os.path.join(PEERS_DIR, "run.py")):
    sys.exit("BENCH_PEERS_DIR must name the harness folder (bench/run.sh sets it)")
sys.path[:0] = [HERE, PEERS_DIR]

import common  # noqa: E402  (the harness's, through the path above)
import run  # noqa: E402


def arguments(doc: str | None) -> argparse.ArgumentParser:
    """The options every driver has; a driver adds its own."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--url", required=True, help="a Redis to FLUSHALL and use")
    ap.add_argument("--libs", required=True, help="comma list of <adapter>[:variant|:all]")
    ap.add_argument("--n", type=int, default=20_000, help="jobs per phase")
    ap.add_argument("--drain-timeout", type=float, default=100.0)
    ap.add_argument("--out", required=True)
    return ap


def run_targets(args: argparse.Namespace, kind: str, run_one) -> None:
    """`run_one(mod, variant, args)` for every target of args.libs, then exit: status 1
    if any returned False."""
    os.environ[common.ENV_URL] = args.url  # adapters read it at import time
    start(args.out)
    ok = True
    for mod, variant in run.parse_targets(args.libs):
        print(f"== {mod.NAME}:{variant}{getattr(args, 'label', '')} ({kind})", flush=True)
        ok = run_one(mod, variant, args) and ok
    sys.exit(0 if ok else 1)


def start(out: str) -> None:
    """Set up a driver's run: adapters found here, results folder, env.json."""
    # run.load finds the <lib>_<workload>_bench.py adapters in this folder
    os.environ["BENCH_ADAPTER_PATH"] = os.pathsep.join(
        filter(None, [HERE, os.environ.get("BENCH_ADAPTER_PATH")])
    )
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump({"nproc": os.cpu_count(), "versions": run.versions()}, f, indent=1)


def fill(mod, variant: str, url: str, n: int, kind: str) -> None:
    """Queue `n` jobs of `kind` for a drain, untimed, the fastest way the adapter has."""
    client = getattr(mod, "FillClient", mod.Client)(url, variant)
    try:
        if client.BULK_API:
            client.enqueue_bulk(kind, range(n))
        elif client.CONCURRENT_API:
            client.enqueue_concurrent(kind, range(n))
        else:
            client.enqueue_each(kind, range(n))
    finally:
        client.close()


def attempt(name: str, measure, res: dict):
    """What `measure()` returns, or None with its exception recorded under res["errors"]."""
    try:
        return measure()
    except Exception as error:  # recorded and reported, never skipped
        traceback.print_exc()
        res["errors"][name] = f"{type(error).__name__}: {error}"
        print(f"  !! {name} failed: {res['errors'][name]}", flush=True)
        return None


def finish(r, out: str, name: str, res: dict) -> bool:
    """End a repetition: FLUSHALL, its results appended to <out>/<name>.json (run.py's
    format; repetitions accumulate across calls, as in run.py); whether every phase
    succeeded."""
    r.flushall()
    r.close()
    path = os.path.join(out, f"{name}.json")
    data = []
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    res["rep"] = len(data) + 1
    data.append(res)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    return not res["errors"]
