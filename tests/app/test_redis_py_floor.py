"""The oldest redis-py cogworker allows (`redis>=5.0` in pyproject.toml): Celery's kombu and
arq still pin redis-py below 6, and an application using either beside cogworker gets that
one.  On it cogworker must import, enqueue and run jobs on one server, and refuse a Redis
Cluster with a clear error (its cluster clients are built on redis-py 8.2).

redis-py 5.3.1 (the newest 5.x) is installed with pip into a directory of the test's own,
put ahead of the venv's redis-py on the PYTHONPATH of the processes the test starts.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import redis

from tests.app.jobs import SIDE_EFFECTS_URL_ENV
from tests.support.processes import CogworkerFactory, child_environment, wait_until

#: The redis-py the peers' pins resolve to.
OLD_REDIS_PY = "5.3.1"
APP = "tests.app.jobs:config"

ENQUEUE = """
import sys
import redis, cogworker
from tests.app.jobs import Count
assert redis.__version__ == sys.argv[2], redis.__version__
client = cogworker.Client(cogworker.Config(redis_url=sys.argv[1]))
print(",".join(str(client.enqueue(Count, n)) for n in range(5)))
"""

ON_A_CLUSTER = """
import cogworker
try:
    cogworker.Client(cogworker.Config(redis_url="redis+cluster://127.0.0.1:1"))
except cogworker.ConfigError as error:
    print(error)
"""


@pytest.fixture(scope="module")
def old_redis_py(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a process that imports redis-py `OLD_REDIS_PY`."""
    target = tmp_path_factory.mktemp("redis-py-floor")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--target", str(target),
         f"redis=={OLD_REDIS_PY}"],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    env = child_environment()
    env["PYTHONPATH"] = os.pathsep.join([str(target), env["PYTHONPATH"]])
    return env


def _python(env: dict[str, str], code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_jobs_enqueued_and_run_with_the_oldest_redis_py_allowed(
    old_redis_py: dict[str, str],
    redis_url: str,
    rc: redis.Redis,
    cogworker_factory: CogworkerFactory,
) -> None:
    """A client and a worker on redis-py 5.3.1 push and run five jobs, each once, and the
    worker's in-progress lists end empty."""
    jids = _python(old_redis_py, ENQUEUE, redis_url, OLD_REDIS_PY).split(",")
    worker = cogworker_factory(
        APP, redis_url=redis_url, env={**old_redis_py, SIDE_EFFECTS_URL_ENV: redis_url}
    )
    wait_until(lambda: rc.get("count:total") == b"5", 60, message=worker.log_tail)
    assert {jid.decode() for jid in rc.smembers("count:jids")} == set(jids)
    wait_until(lambda: not list(rc.scan_iter(match="cogworker:*inprogress*")), 30)


def test_a_cluster_with_an_older_redis_py_is_a_config_error(
    old_redis_py: dict[str, str],
) -> None:
    """Naming the redis-py it needs and the one it found, before connecting anywhere."""
    said = _python(old_redis_py, ON_A_CLUSTER)
    assert f"needs redis-py 8.2 or later; this is redis-py {OLD_REDIS_PY}" in said
