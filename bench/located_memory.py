"""What the jid index of the scheduled, retry and dead sets costs in Redis memory.

    .venv/bin/python -m bench.located_memory [--entries 100000]

Starts a private redis-server, files ENTRIES jobs in one queue's dead set
through the engine's own script (`bury`, as a poller or reconciler files a
job: the entry and its index entry in one step; 1,000 per pipeline), then
prints `MEMORY USAGE` (every element counted: `SAMPLES 0`) of the dead set
and of the queue's index, per entry, and Redis's `used_memory` growth per
entry.  The jids are those the client gives (24 characters).
"""

from __future__ import annotations

import argparse
import json

import redis

from bench.tracking_memory import private_redis
from cogworker.adapters import redis_keys as keys
from cogworker.adapters import scripts
from cogworker.app.job_record import new_jid

QUEUE = "default"
BATCH = 1_000
NOW = 1_800_000_000.0


def payload(jid: str, n: int) -> str:
    """A small dead job's entry, as the engine files one."""
    return json.dumps({
        "class": "app.jobs.Send", "queue": QUEUE, "jid": jid, "args": [n, "x" * 40],
        "retry": True, "created_at": NOW, "enqueued_at": NOW, "error_class": "RuntimeError",
        "error_message": f"boom {n}", "failed_at": NOW, "retry_count": 3,
    })  # fmt: skip


def fill(client: redis.Redis, entries: int) -> None:
    """`entries` jobs filed in the queue's dead set by `bury` (none trimmed)."""
    dead, located = keys.dead(QUEUE), keys.located(QUEUE)
    no_key = keys.no_lock(QUEUE)
    for first in range(0, entries, BATCH):
        pipe = client.pipeline(transaction=False)
        for n in range(first, min(entries, first + BATCH)):
            filed = payload(new_jid(), n)
            scripts.BURY.queue(
                pipe, (dead, dead, no_key, no_key, located),
                ("taken", filed, NOW + n, filed, 0, entries, "", "", "0"),
            )  # fmt: skip
        scripts.run_pipeline(client, pipe)


def usage(client: redis.Redis, key: str) -> int:
    """`MEMORY USAGE key SAMPLES 0`: every element counted."""
    return int(client.execute_command("MEMORY", "USAGE", key, "SAMPLES", 0) or 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=100_000)
    entries = parser.parse_args().entries
    with private_redis() as url:
        client = redis.Redis.from_url(url)
        before = int(client.info("memory")["used_memory"])
        fill(client, entries)
        grown = int(client.info("memory")["used_memory"]) - before
        version = client.info("server")["redis_version"]
        dead, located = usage(client, keys.dead(QUEUE)), usage(client, keys.located(QUEUE))
        print(f"{entries:,} dead entries, one queue, Redis {version}\n")
        print("| key | MiB | bytes per entry |\n|---|---:|---:|")
        for name, size in (("the dead set", dead), ("its jid index", located),
                           ("`used_memory` growth", grown)):  # fmt: skip
            print(f"| {name} | {size / 2**20:.1f} | {size / entries:.0f} |")


if __name__ == "__main__":
    main()
