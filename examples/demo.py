"""Enqueue a stream of example jobs: `python -m examples.demo [--rounds N]`."""

from __future__ import annotations

import argparse
import itertools
import random
import time

import cogworker
from cogworker.exceptions import RedisUnavailableError
from examples.app import FlakyCharge, ImportReport, SendWelcomeEmail, config


def enqueue_round(client: cogworker.Client, number: int) -> None:
    """A handful of jobs of every kind, one of them for later."""
    client.enqueue_many(SendWelcomeEmail, [[number * 10 + i] for i in range(5)])
    client.enqueue(FlakyCharge, number, random.randint(100, 10_000))
    client.enqueue_in(5, SendWelcomeEmail, number * 10 + 9)
    if number % 5 == 0:
        client.enqueue(ImportReport, f"/reports/{number}.csv")


def wait_for_redis(client: cogworker.Client, timeout: float = 30.0) -> None:
    """The worker may still be starting the embedded Redis: wait for it, bounded."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            client.redis.ping()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise RedisUnavailableError("no Redis answered within 30 s") from None
            time.sleep(0.2)


def main() -> None:
    """Enqueue a round every two seconds (forever, or `--rounds` times)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=0, help="stop after this many (0: never)")
    rounds = parser.parse_args().rounds
    client = cogworker.Client(config)
    wait_for_redis(client)
    for number in itertools.islice(itertools.count(1), rounds or None):
        enqueue_round(client, number)
        print(f"demo: round {number} enqueued", flush=True)
        time.sleep(2.0)


if __name__ == "__main__":
    main()
