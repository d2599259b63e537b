"""How much Redis memory per-class metrics take: bytes per class per hour (issue #23).

    .venv/bin/python bench/metrics_memory.py [--classes 20] [--runs-per-minute 30]

Starts a private redis-server on a free port and, for each spread of run
times (how many histogram buckets a class's runs fall in within a minute),
settles a busy hour of `--classes` classes through the real scripts: every
minute, a batch of acks and one failed run per class (`SettleStore`, as a
worker does). Then sums MEMORY USAGE over each class's keys: the 60 minute
hashes and the hour hash (what every further hour adds), and the total hash
and its share of the queue's registry (once per class). Prints one table.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import redis

from bench.tracking_memory import start_redis
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.jobs.fetch import Fetched
from cogworker.adapters.jobs.outcome import OutcomeRecord
from cogworker.adapters.jobs.settle import SettleOrder, SettleStore
from cogworker.domain.class_metrics import BOUNDS, RunSample, hour_of, minute_of

QUEUE = "default"
HOUR_START = 1_800_000_000 - 1_800_000_000 % 3600
SPREADS = (1, 3, 8)
OWNER = "bench:1:memory"


def _order(
    client: redis.Redis, class_name: str, jid: str, micros: int, failed: bool
) -> SettleOrder:
    raw = f'{{"jid":"{jid}","class":"{class_name}","queue":"{QUEUE}"}}'.encode()
    client.lpush(keys.in_progress(OWNER), raw)
    outcome = OutcomeRecord(
        kind="retry" if failed else "ack",
        jid=jid,
        class_name=class_name,
        payload="{}" if failed else "",
        history_per_job=failed,
        sample=RunSample(queue=QUEUE, micros=micros, failed=failed),
    )
    return SettleOrder(fetched=Fetched(queue=QUEUE, raw=raw), outcome=outcome)


def settle_an_hour(client: redis.Redis, classes: int, runs: int, spread: int) -> None:
    """Every minute of one hour, each class's runs (over `spread` buckets) and one failure."""
    store = SettleStore(client)
    for minute in range(60):
        now = HOUR_START + minute * 60 + 1.0
        for number in range(classes):
            name = f"app.jobs.Job{number:03d}"
            times = [BOUNDS[5 + run % spread] - 1 for run in range(runs)]
            orders = [_order(client, name, f"{name}-{minute}-{run}", micros, failed=False)
                      for run, micros in enumerate(times)]  # fmt: skip
            orders.append(_order(client, name, f"{name}-{minute}-f", times[0], failed=True))
            store.settle_many(OWNER, orders, now)


def bytes_per_class(client: redis.Redis, classes: int) -> tuple[float, float]:
    """Average bytes of one class's hour (minute hashes + hour hash), and of its lasting
    keys (total hash + its share of the registry)."""
    hourly = lasting = 0
    now = HOUR_START + 1.0
    for number in range(classes):
        name = f"app.jobs.Job{number:03d}"
        minutes = [keys.metrics_minute(QUEUE, name, minute_of(now) + m) for m in range(60)]
        hour = keys.metrics_hour(QUEUE, name, hour_of(now))
        hourly += sum(int(client.memory_usage(key, samples=0) or 0) for key in [*minutes, hour])
        lasting += int(client.memory_usage(keys.metrics_total(QUEUE, name), samples=0) or 0)
    lasting += int(client.memory_usage(keys.metrics_classes(QUEUE), samples=0) or 0)
    return hourly / classes, lasting / classes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--classes", type=int, default=20)
    parser.add_argument("--runs-per-minute", type=int, default=30)
    options = parser.parse_args()
    server, url = start_redis(Path(tempfile.mkdtemp()))
    try:
        client = redis.Redis.from_url(url)
        print("| buckets a minute | bytes per class per hour | per class, once (total, registry) |")
        print("|---|---|---|")
        for spread in SPREADS:
            client.flushall()
            settle_an_hour(client, options.classes, options.runs_per_minute, spread)
            hourly, lasting = bytes_per_class(client, options.classes)
            print(f"| {spread} | {hourly:,.0f} | {lasting:,.0f} |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
