"""How much Redis memory a kept result takes (issue #24): the record and its jid index.

    .venv/bin/python -m bench.results_memory [--jobs 20000]

Starts a private redis-server on a free port, enqueues N jobs keeping a small
result (`{"n":123,"ok":true}`, see results_jobs.py), drains them with two
`cogworker work` processes, then sums MEMORY USAGE over the result records
and the jid index entries, and prints them with Redis's `used_memory`
growth per job.
"""

from __future__ import annotations

import argparse

import redis

import cogworker
from bench.results_jobs import Kept
from bench.tracking_memory import drain, private_redis, usage

#: The jobs' queue is "default": its results' keys start with its hash tag.
KINDS = {"{q:default}:result:": "result records", "jid:": "jid index entries"}


def measured(url: str, total: int) -> list[tuple[str, int]]:
    """Enqueue and drain `total` jobs on `url`; (what, bytes per job or key)."""
    used = redis.Redis.from_url(url).info("memory")["used_memory"]
    cogworker.Client(cogworker.Config(redis_url=url)).enqueue_many(
        Kept, [[n] for n in range(total)]
    )
    drain(url, total, "bench.results_jobs:config")
    figures = usage(url, KINDS)
    grown = redis.Redis.from_url(url).info("memory")["used_memory"] - used
    per_key = [(KINDS[k], size // max(count, 1)) for k, (count, size) in figures.items()]
    return [*per_key, ("Redis used_memory growth per job", grown // total)]


def main() -> None:
    """Enqueue, drain, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=20_000)
    total = parser.parse_args().jobs
    with private_redis() as url:
        rows = measured(url, total)
    print(f"{total:,} jobs keeping a small result, drained\n| what | bytes |\n|---|---|")
    print("\n".join(f"| {what} | {size} |" for what, size in rows))


if __name__ == "__main__":
    main()
