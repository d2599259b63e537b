"""Sidekiq adapter for the shared peer harness (same interface as its adapters/*_bench.py).

Sidekiq is Ruby: Debian's `ruby-sidekiq` (Sidekiq 6.4.1 on Ruby 3.1;
bench/run.sh installs it with apt-get when it is missing). The jobs are in
bench/sidekiq/jobs.rb, the same bodies as the harness's (one INCR, one
RPUSH); the workers are 2 × `sidekiq -r bench/sidekiq/jobs.rb -c THREADS`
(one OS process each, counted by the harness like any peer's); the enqueue
side is bench/sidekiq/client.rb, one Ruby process per `Client`, started
before the timing and told over a pipe to run a whole phase (each job's
`perform_async`, or `Sidekiq::Client.push_bulk` 1,000 jobs a call, or the
paced latency jobs), so the figures are Ruby's own and the pipe is crossed
once a phase.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import common

NAME = "sidekiq"
HERE = os.path.dirname(os.path.abspath(__file__))
JOBS_RB = os.path.join(HERE, "sidekiq", "jobs.rb")
CLIENT_RB = os.path.join(HERE, "sidekiq", "client.rb")
PROCESSES = 2
QUEUE = "default"

# variant -> threads per process (`-c`); Sidekiq's default concurrency is 5
VARIANTS = {"p2c5": 5, "p2c10": 10, "p2c25": 25}


def executable(name: str) -> str:
    """A Ruby program of Debian's packages, or an error saying how to get it."""
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"{name} not found: apt-get install ruby-sidekiq (bench/run.sh does)")
    return found


def describe(variant: str) -> str:
    return (
        f"{PROCESSES} x `sidekiq -r bench/sidekiq/jobs.rb -c {VARIANTS[variant]}` (Debian's "
        "ruby-sidekiq; BRPOP fetch, at most once; queue 'default'; logger level WARN; "
        "other settings default)"
    )


def worker_commands(url: str, variant: str) -> list[list[str]]:
    command = [executable("sidekiq"), "-r", JOBS_RB, "-c", str(VARIANTS[variant])]
    return [command for _ in range(PROCESSES)]


class Client(common.SyncClient):
    BULK_API = f"Sidekiq::Client.push_bulk, {common.BULK_BATCH} jobs per call"

    def __init__(self, url: str, variant: str):
        super().__init__(url, variant)
        self.ruby = subprocess.Popen(
            [executable("ruby"), CLIENT_RB],
            env={**os.environ, common.ENV_URL: url},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _call(self, **request) -> int:
        """One phase run by the Ruby client; how many jobs it sent."""
        assert self.ruby.stdin is not None
        assert self.ruby.stdout is not None
        self.ruby.stdin.write(json.dumps(request) + "\n")
        self.ruby.stdin.flush()
        line = self.ruby.stdout.readline()
        if not line:
            raise RuntimeError(f"bench/sidekiq/client.rb exited ({self.ruby.wait()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"bench/sidekiq/client.rb: {reply['error']}")
        return int(reply["sent"])

    def enqueue(self, kind: str, arg: int) -> None:
        self._call(op="each", kind=kind, args=[arg])

    def enqueue_each(self, kind: str, args) -> None:
        self._call(op="each", kind=kind, args=list(args))

    def enqueue_bulk(self, kind: str, args) -> None:
        self._call(op="bulk", kind=kind, args=list(args), batch=common.BULK_BATCH)

    def enqueue_paced(self, kind: str, count: int, rate: float, max_seconds: float) -> int:
        return self._call(op="paced", kind=kind, count=count, rate=rate, max_seconds=max_seconds)

    def close(self) -> None:
        assert self.ruby.stdin is not None
        self.ruby.stdin.close()
        self.ruby.wait(30)


def pending(r) -> int:
    """Jobs not yet started (run.py --no-incr): Sidekiq's BRPOP leaves no trace of a
    running job in Redis, so this is short by the jobs running at that instant."""
    return r.llen(f"queue:{QUEUE}")
