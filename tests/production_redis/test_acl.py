"""The documented ACL rules, exactly, on a real server: a worker drains everything under them,
and a read-only dashboard serves every page under its own; Redis refuses nothing."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import httpx
import psutil
import pytest
import redis

import cogworker
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.support.processes import REPO_ROOT, CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer, RedisServerFactory
from tests.web.helpers import serving

DOC = REPO_ROOT / "docs" / "production-redis.md"
APP = "tests.production_redis.jobs:periodic_config"
DASHBOARD_PAGES = (
    "/",
    "/workers",
    "/queues",
    "/retries",
    "/dead",
    "/scheduled",
    "/periodic",
    "/job-metrics",
    "/about",
    "/metrics",
    "/api/stats",
)


def documented_rules() -> dict[str, tuple[str, str, list[str]]]:
    """User -> (password, SETUSER rules) of each `ACL SETUSER` command on the docs page."""
    text = DOC.read_text().replace("\\\n", " ")
    users: dict[str, tuple[str, str, list[str]]] = {}
    for line in text.splitlines():
        words = shlex.split(line) if "ACL SETUSER" in line and line.startswith("redis-cli") else []
        if words:
            name, *rules = words[words.index("SETUSER") + 1 :]
            password = next(rule[1:] for rule in rules if rule.startswith(">"))
            users[name] = (name, password, rules)
    return users


@pytest.fixture
def guarded(redis_server_factory: RedisServerFactory) -> RedisServer:
    """A server of the test's own with the two documented users."""
    server = redis_server_factory()
    with server.client() as admin:
        for name, _password, rules in documented_rules().values():
            admin.execute_command("ACL", "SETUSER", name, *rules)
    return server


def user_url(server: RedisServer, user: str) -> str:
    """The server's URL with the documented user and its password."""
    name, password, _ = documented_rules()[user]
    return f"redis://{name}:{password}@127.0.0.1:{server.port}/0"


def refused_commands(server: RedisServer) -> list[str]:
    """What Redis's ACL LOG holds: each refusal's user and command or key."""
    with server.client() as admin:
        return [f"{entry['username']}: {entry['object']}" for entry in admin.acl_log()]


def test_a_worker_drains_everything_under_the_documented_worker_rules(
    guarded: RedisServer, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """Two worker processes (their URL in a file, handed on in the environment, asking for
    durable writes: each outcome sends a WAIT), a client with the user in Config fields:
    every kind of job runs, the stop's hand-back is written, and the ACL LOG is empty."""
    url_file = tmp_path / "redis-url"
    # No replica here: every WAIT falls short, quickly; what counts is that it is allowed.
    durable = "?min_replicas=1&replica_timeout=0.01"
    url_file.write_text(user_url(guarded, "cogworker-worker") + durable + "\n")
    _, password, _ = documented_rules()["cogworker-worker"]
    mix = drain.Mix()
    client = cogworker.Client(
        cogworker.Config(
            redis_url=f"redis://127.0.0.1:{guarded.port}/0",
            redis_username="cogworker-worker",
            redis_password=password,
        )
    )
    drain.enqueue(client, mix)
    client.close()
    command = ["work", APP, "--redis-url-file", str(url_file), "--processes", "2"]
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    with CogworkerProcess(command, directory=tmp_path, env=env) as supervisor:
        drain.wait_drained(rc, mix, supervisor)
        wait_until(lambda: len(drain.runs(rc, "tick")) >= 2, 30.0, message=supervisor.log_tail)
        lines = [" ".join(process.cmdline()) for process in _family(supervisor.pid)]
        assert len(lines) == 3, lines
        assert all(password not in line for line in lines), lines
        assert supervisor.terminate(60.0) == 0, supervisor.log_tail()
    assert refused_commands(guarded) == []
    assert "Traceback" not in supervisor.log_text()
    with guarded.client() as admin:
        assert admin.scard("cogworker:processes") == 0  # both stopped cleanly, as that user
        assert admin.zcard("cogworker:{q:default}:dead") == mix.dead


def _family(pid: int) -> list[psutil.Process]:
    supervisor = psutil.Process(pid)
    return [supervisor, *supervisor.children()]


def test_a_read_only_dashboard_serves_every_page_under_the_documented_dashboard_rules(
    guarded: RedisServer, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """With jobs in every set, `cogworker serve --read-only` as the dashboard's user answers
    every page (a dead job's too) and Redis refuses it nothing."""
    with guarded.client() as admin:
        admin.zadd("cogworker:{q:default}:dead", {json.dumps(_dead_job()): 1.0})
    client = cogworker.Client(cogworker.Config(redis_url=user_url(guarded, "cogworker-worker")))
    drain.enqueue(client, drain.Mix(plain=5, retried=0, scheduled=2, dead=0, unique=1))
    queued = client.enqueue(Drain, 99, jid="queued-1")
    client.close()
    url_file = tmp_path / "dashboard-url"
    url_file.write_text(user_url(guarded, "cogworker-dashboard"))

    with serving(tmp_path, "--read-only", "--redis-url-file", str(url_file)) as base:
        pages = [*DASHBOARD_PAGES, "/job?jid=dead-1", "/queue?name=default", "/history?class=Drain"]
        # Found only by searching the queue: its entries, read under the dashboard's rules.
        pages.append(f"/job?jid={queued}")
        # Go to jid answers with a redirect to where it found the job: followed.
        answers = {
            page: httpx.get(base + page, timeout=10, follow_redirects=True).status_code
            for page in pages
        }

    assert answers == dict.fromkeys(pages, 200)
    assert refused_commands(guarded) == []


def test_a_read_only_dashboard_serves_a_redis_no_process_has_written_to_yet(
    guarded: RedisServer, tmp_path: Path
) -> None:
    """Before any worker or client has numbered the key layout, the dashboard's check of it
    can't SCAN for old keys under the dashboard's rules: its pages still answer."""
    url_file = tmp_path / "dashboard-url"
    url_file.write_text(user_url(guarded, "cogworker-dashboard"))
    with serving(tmp_path, "--read-only", "--redis-url-file", str(url_file)) as base:
        answers = {page: httpx.get(base + page, timeout=10).status_code for page in ("/", "/dead")}
    assert answers == {"/": 200, "/dead": 200}


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("SCRIPT", "LOAD", "return redis.call('GET', 'secret')"), id="script-load"),
        pytest.param(("EVAL", "return 1", "0"), id="eval"),
        pytest.param(("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"), id="evalsha"),
        pytest.param(("EVAL_RO", "return 1", "0"), id="eval-ro"),
        pytest.param(("SCAN", "0"), id="scan"),
        pytest.param(("KEYS", "*"), id="keys"),
        pytest.param(("GET", "secret"), id="other-key"),
        pytest.param(("SET", "cogworker:layout", "1"), id="set-own-key"),
        pytest.param(("LPUSH", "cogworker:{q:default}:queue", "x"), id="push-own-queue"),
        pytest.param(("DEL", "cogworker:{q:default}:dead"), id="delete-own-key"),
        pytest.param(("FLUSHALL",), id="flushall"),
    ],
)
def test_the_dashboard_rules_refuse_all_but_reading_cogworkers_keys(
    guarded: RedisServer, command: tuple[str, ...]
) -> None:
    """The dashboard's user can't load or run a script, list key names, read another
    application's key, or write cogworker's."""
    with guarded.client() as admin:
        admin.set("secret", "another application's")
    name, password, _ = documented_rules()["cogworker-dashboard"]
    dashboard = redis.Redis(port=guarded.port, username=name, password=password)
    with dashboard, pytest.raises(redis.exceptions.NoPermissionError):
        dashboard.execute_command(*command)


def _dead_job() -> dict[str, object]:
    return {
        "class": "tests.production_redis.jobs.Dies",
        "args": [1],
        "jid": "dead-1",
        "queue": "default",
        "created_at": 1.0,
        "enqueued_at": 1.0,
        "error_class": "JobBoomError",
        "error_message": "dies 1",
        "failed_at": 1.0,
        "retry_count": 0,
    }
