"""taskiq in the failing workload (bench/fail_run.py).

taskiq retries only with a retry middleware; the one that schedules is
SmartRetryMiddleware with a schedule source: here its defaults (3 tries,
5 s delay, no jitter or backoff), `default_retry_label=True` (retry every
task), and taskiq-redis's ListRedisScheduleSource (a retry is a schedule
keyed by its id, its id pushed on the list of the minute it is due,
`schedule:time:<YYYY-MM-DDTHH:MM>`). The broker is the harness's stream
broker's kind (RedisStreamBroker) with that middleware, as `stream_broker`
here, so the harness's command line and client work as for its own.
Retries are sent when due by a `taskiq scheduler` process, not started: the
drain measures the filing, and the 5 s delay would bring them back inside it.
"""

from __future__ import annotations

import datetime

import common
import fail_work
from taskiq.middlewares import SmartRetryMiddleware
from taskiq_redis import ListRedisScheduleSource, RedisStreamBroker

from adapters import taskiq_bench

NAME = "taskiq"
VARIANTS = {"stream": taskiq_bench.VARIANTS["stream"]}

schedule_source = ListRedisScheduleSource(common.redis_url())
retry = SmartRetryMiddleware(default_retry_label=True, schedule_source=schedule_source)
stream_broker = RedisStreamBroker(url=common.redis_url()).with_middlewares(retry)


async def _fail(i: int) -> None:
    fail_work.attempt()


TASKS = {fail_work.KIND: stream_broker.register_task(_fail, task_name=fail_work.KIND)}


POLICY = (
    "SmartRetryMiddleware(default_retry_label=True, schedule_source="
    f"ListRedisScheduleSource(url)): {retry.default_retry_count} tries, "
    f"{retry.default_delay:g} s delay; no scheduler process"
)
describe, worker_commands = fail_work.on_harness_adapter(taskiq_bench, __name__, POLICY)


class Client(taskiq_bench.Client):
    async def astart(self) -> None:
        self.broker, self.tasks = stream_broker, TASKS
        await self.broker.startup()


#: The minute lists seen so far: a retry is filed on the list of the minute it is due.
_minute_keys: set[str] = set()


def filed(r) -> int:
    """Retries filed in the schedule source. Polled from before the first failure,
    every few ms: each poll adds the list of the minute a retry filed now is due in."""
    due = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=retry.default_delay)
    _minute_keys.add(f"schedule:time:{due:%Y-%m-%dT%H:%M}")
    pipe = r.pipeline(transaction=False)
    for key in _minute_keys:
        pipe.llen(key)
    return sum(pipe.execute())
