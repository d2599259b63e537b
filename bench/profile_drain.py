#!/usr/bin/env python
"""Where does a cogworker worker spend its time during a drain?  (py-spy)

    bash bench/run.sh --profile [--variant p2c10] [--n 100000] [-- --idle]
    bash bench/run.sh --profile --workload io [--variant p2a100] [--n 50000]
    bash bench/run.sh --profile --workload fail [--variant p2c10] [--n 50000]

(run.sh starts the private Redis and calls this with --url and --peers-dir).
It queues N jobs of the benchmark (the no-op cogworker_bench.Noop, one INCR
each; with --workload io the I/O-bound cogworker_io_bench job, a 10 ms wait
then the INCR; with --workload fail cogworker_fail_bench's job, the INCR then a
raise, each filed for a retry) with the bulk API, starts the variant's worker
processes as the harness does, waits for the first completion (start-up is
not profiled), samples ONE worker process with `py-spy record` for --duration
seconds, waits for the drain to end and stops the workers.  It writes py-spy's
raw collapsed stacks (input for flamegraph.pl or speedscope) and a summary to
--out and prints the summary:

* by default only the thread holding the GIL is sampled (py-spy --gil): the
  shares are of the process's Python CPU time;
* --idle samples every thread, blocked or not: the summary then also says
  what the processor threads and the fetcher were waiting for;
* --all-threads samples the threads py-spy thinks are running (on a VM that
  includes many blocked in socket reads).

The profiler pauses the sampled process: the drain rate printed here is not a
benchmark figure.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import redis

HERE = os.path.dirname(os.path.abspath(__file__))
Counter = collections.Counter


def read_stacks(raw_path: str) -> list[tuple[list[str], int]]:
    """(frames outermost first, sample count) per line of py-spy's raw output."""
    out = []
    with open(raw_path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack:
                frames = [
                    fr for fr in stack.split(";") if not fr.startswith(("thread ", "process "))
                ]
                out.append((frames, int(count)))
    return out


#: (a frame in the stack, the thread it tells) for `role`
ROLES = (
    ("_process_loop", "processor"),
    ("Fetcher.run", "fetcher"),
    ("EventLoop._run", "event loop"),
    ("Acker.run", "acker"),
    ("from_threads.<locals>.one_thread", "producer"),  # bench/profile_producers.py
)


def role(stack: str) -> str:
    for key, name in ROLES:
        if key in stack:
            return name
    return "housekeeping/main"


def state(frames: list[str], stack: str) -> str:
    """What a processor or fetcher thread was doing in one sample."""
    leaf = frames[-1] if frames else ""
    if "manager.py" in leaf and "_process_loop" in leaf:
        return "waiting for work (work queue)"
    if "read_from_socket" in leaf or "send_packed_command" in leaf:
        if "SettleStore.settle" in stack:
            return "Redis round trip: settle/ack script"
        if "mark_done" in stack:
            return "Redis round trip: the job's INCR"
        if "EnqueueStore" in stack:
            return "Redis round trip: push"
        return "Redis round trip: fetch" if "Fetcher" in stack else "Redis round trip: other"
    if "randbytes" in leaf:
        return "reading the OS's random source (a jid)"
    if "Condition.wait" in leaf or "acquire" in leaf:
        return "waiting on a lock/semaphore/condition"
    return "running Python (or waiting for the GIL)"


def percent_lines(counter: Counter[str], total: int, top: int) -> list[str]:
    return [f"  {100 * v / total:5.1f}%  {k}" for k, v in counter.most_common(top)]


def summarize(raw_path: str, top: int, idle: bool) -> str:
    stacks = read_stacks(raw_path)
    total = sum(count for _, count in stacks) or 1
    roles: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    states: dict[str, Counter[str]] = collections.defaultdict(Counter)
    for frames, count in stacks:
        joined = ";".join(frames)
        roles[role(joined)] += count
        if frames:
            leaves[frames[-1]] += count
        for fn in {re.sub(r":\d+\)$", ")", fr) for fr in frames}:  # line numbers dropped
            inclusive[fn] += count
        if idle:
            states[role(joined)][state(frames, joined)] += count
    out = [f"samples: {total}", "", "by thread (share of samples):"]
    out += percent_lines(roles, total, top)
    for name in ("processor", "fetcher", "producer"):
        if states.get(name):
            out += ["", f"{name} threads, share of their samples:"]
            out += percent_lines(states[name], sum(states[name].values()), top)
    out += ["", f"top {top} innermost frames (self, with line):"]
    out += percent_lines(leaves, total, top)
    out += ["", f"top {top} functions, inclusive:"]
    out += percent_lines(inclusive, total, top)
    return "\n".join(out)


def done_count(r: redis.Redis, key: str) -> int:
    return int(r.get(key) or 0)


def spawn_workers(cmds: list[list[str]], peers_dir: str, log) -> list[subprocess.Popen]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [peers_dir, HERE, env.get("PYTHONPATH")]))
    return [
        subprocess.Popen(
            cmd,
            cwd=peers_dir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        for cmd in cmds
    ]


def stop_workers(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)


def profile_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The options of every profile (this one's, bench/profile_producers.py's)."""
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--url", required=True, help="a Redis to FLUSHALL and use")
    ap.add_argument("--peers-dir", required=True, help="the harness folder (for common.py)")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    ap.add_argument("--out", required=True)
    ap.add_argument("--top", type=int, default=25)
    return ap


def pyspy_path() -> str:
    """This venv's py-spy, else PATH's; exit saying how to install it if there is none."""
    pyspy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or shutil.which("py-spy")
    if not pyspy:
        sys.exit("py-spy is not installed (pip install py-spy into this venv)")
    return pyspy


def parse_args() -> argparse.Namespace:
    ap = profile_arguments(__doc__)
    ap.add_argument("--workload", choices=("noop", "io", "fail"), default="noop")
    ap.add_argument("--variant", default=None, help="default p2c10 (noop, fail), p2a100 (io)")
    ap.add_argument("--duration", type=int, default=8, help="seconds of sampling")
    ap.add_argument("--idle", action="store_true", help="sample every thread, blocked or not")
    ap.add_argument("--all-threads", action="store_true", help="threads py-spy thinks run")
    return ap.parse_args()


def main() -> None:
    args = parse_args()
    os.environ["BENCH_REDIS_URL"] = args.url
    sys.path[:0] = [HERE, args.peers_dir]
    import common

    done_key = common.DONE_KEY
    if args.workload == "io":
        import cogworker_io_bench as cb
        import io_work

        args.variant = args.variant or "p2a100"
        kind = io_work.KIND
    elif args.workload == "fail":
        import cogworker_fail_bench as cb
        import fail_work

        args.variant = args.variant or "p2c10"
        kind, done_key = fail_work.KIND, fail_work.ATTEMPTS_KEY
    else:
        import cogworker_bench as cb

        args.variant = args.variant or "p2c10"
        kind = "noop"

    pyspy = pyspy_path()
    os.makedirs(args.out, exist_ok=True)
    r = redis.Redis.from_url(args.url)
    r.flushall()
    client = (
        cb.FillClient(args.url, args.variant)
        if args.workload == "io"
        else cb.Client(args.url, args.variant)
    )
    client.enqueue_bulk(kind, range(args.n))
    client.close()

    mode = ["--idle"] if args.idle else [] if args.all_threads else ["--gil"]
    raw = os.path.join(args.out, f"pyspy-{args.variant}.txt")
    with open(os.path.join(args.out, "workers.log"), "ab") as log:
        procs = spawn_workers(cb.worker_commands(args.url, args.variant), args.peers_dir, log)
        t0 = time.perf_counter()
        try:
            while done_count(r, done_key) == 0:
                if time.perf_counter() - t0 > 30:
                    sys.exit("no job finished within 30 s; see workers.log")
                time.sleep(0.01)
            c0, ts = done_count(r, done_key), time.perf_counter()
            spy = subprocess.run(
                [pyspy, "record", "--pid", str(procs[0].pid), "--duration", str(args.duration),
                 "--rate", str(args.rate), "--threads", *mode, "--format", "raw", "--output", raw],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )  # fmt: skip
            rate_during = (done_count(r, done_key) - c0) / (time.perf_counter() - ts)
            while done_count(r, done_key) < args.n and time.perf_counter() - t0 < 300:
                time.sleep(0.05)
            done, total_s = done_count(r, done_key), time.perf_counter() - t0
        finally:
            stop_workers(procs)
    if spy.returncode != 0:
        sys.exit(f"py-spy failed: {spy.stderr.decode()}")
    what = {
        "--idle": "every thread, idle or not",
        "--gil": "only the thread holding the GIL: where the process's Python CPU goes",
    }.get(mode[0] if mode else "", "the threads py-spy counts as running")
    report(
        [
            f"variant {args.variant}: {cb.describe(args.variant)}",
            f"N={args.n}: {done} done in {total_s:.1f} s from spawn (py-spy attached to one "
            f"worker); {rate_during:.0f} jobs/s over both processes while sampling",
            f"sampled pid {procs[0].pid} for {args.duration} s at {args.rate}/s: {what}",
        ],
        raw,
        args,
        f"pyspy-{args.variant}-summary.txt",
    )


def report(heading: list[str], raw: str, args: argparse.Namespace, name: str) -> None:
    """`heading`, then the summary of py-spy's `raw` stacks: printed, and saved as
    <args.out>/`name`."""
    text = "\n".join([*heading, "", summarize(raw, args.top, idle=args.idle)])
    with open(os.path.join(args.out, name), "w") as f:
        f.write(text + "\n")
    print(text)
    print(f"\nraw collapsed stacks (flamegraph.pl / speedscope): {raw}")


if __name__ == "__main__":
    main()
