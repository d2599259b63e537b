"""Settings that can't work stop `cogworker work` before anything starts, in one line.

A malformed Redis URL, wrong credentials, an ACL user that may not run
scripts, a database index Redis doesn't have: exit status 2 and one
`Error:` line naming the setting, never a traceback, never a retry loop,
never a supervisor restarting children that can only crash.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

import cogworker
from tests.app.helpers import CLIENT_KINDS, enqueue_with, status_with
from tests.app.jobs import Record
from tests.support.processes import CogworkerProcess, wait_until
from tests.support.redis_server import RedisServer, RedisServerFactory

APP = "tests.app.jobs:fast_config"
PASSWORD = "right-password"


def run_work(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int, list[str]]:
    """Run `cogworker work APP ARGS...` to its exit: its status and its output's lines."""
    worker = CogworkerProcess(["work", APP, *args], directory=tmp_path, env=env).start()
    try:
        status = worker.wait_for_exit(30.0)
    finally:
        worker.close()
    return status, worker.log_text().splitlines()


@pytest.fixture
def guarded(redis_server_factory: RedisServerFactory) -> RedisServer:
    """A Redis of the test's own with a password, and an ACL user that may not run EVALSHA."""
    server = redis_server_factory()
    with server.client() as admin:
        admin.execute_command(
            "ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "&*", "+@all", "-evalsha"
        )
        admin.config_set("requirepass", PASSWORD)
    return server


def with_credentials(server: RedisServer, credentials: str, database: int = 0) -> str:
    """The server's URL with `user:password` and a database index."""
    return f"redis://{credentials}@127.0.0.1:{server.port}/{database}"


@pytest.mark.processes
@pytest.mark.parametrize("processes", ["1", "2"])
@pytest.mark.parametrize("where", ["flag", "environment"])
def test_a_malformed_redis_url_is_one_line_and_exit_status_2(
    tmp_path: Path, where: str, processes: str
) -> None:
    """`foo://bar` by flag or in $COGWORKER_REDIS_URL, one process or a supervisor: one line."""
    if where == "flag":
        status, lines = run_work(tmp_path, "--redis-url", "foo://bar", "--processes", processes)
        setting = "--redis-url"
    else:
        env = {"COGWORKER_REDIS_URL": "foo://bar"}
        status, lines = run_work(tmp_path, "--processes", processes, env=env)
        setting = "$COGWORKER_REDIS_URL"

    assert status == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"Error: {setting} 'foo://bar': the scheme of a Redis URL is one of"
    ), lines


@pytest.mark.processes
def test_the_dashboard_refuses_a_malformed_redis_url_in_one_line(tmp_path: Path) -> None:
    """`cogworker serve --redis-url foo://bar`: exit status 2, one line naming the flag."""
    server = CogworkerProcess(["serve", "--redis-url", "foo://bar"], directory=tmp_path).start()
    try:
        status = server.wait_for_exit(30.0)
    finally:
        server.close()
    lines = server.log_text().splitlines()

    assert status == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "Error: --redis-url 'foo://bar': the scheme of a Redis URL is one of"
    ), lines


@pytest.mark.processes
def test_a_database_path_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    """`redis://host/abc` would quietly mean database 0: it is an error naming the path."""
    status, lines = run_work(tmp_path, "--redis-url", "redis://127.0.0.1:1/abc")

    assert status == 2, lines
    assert lines == [
        "Error: --redis-url 'redis://127.0.0.1:1/abc': the database 'abc' is not a number "
        "(redis://HOST:PORT/NUMBER)"
    ]


@pytest.mark.processes
def test_a_setting_of_the_wrong_type_is_named(tmp_path: Path) -> None:
    """A `--config` value of a type its field can't take (a quoted number) is refused in one
    line that names the field and the value it got."""
    settings = tmp_path / "cogworker.toml"
    settings.write_text('concurrency = "4"\nqueues = ["default"]\n')
    status, lines = run_work(tmp_path, "--config", str(settings))

    assert status == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: Config.concurrency "), lines
    assert "'4'" in lines[0], lines


REFUSALS = [
    pytest.param(":wrong-password", 0, "the credentials (invalid username", id="password"),
    pytest.param("noscripts:pw", 0, "no permissions to run the 'evalsha'", id="acl-no-evalsha"),
    pytest.param(f":{PASSWORD}", 99, "the database index (DB index is out of range", id="db-99"),
]


@pytest.mark.parametrize("processes", ["1", "2"])
@pytest.mark.parametrize(("credentials", "database", "says"), REFUSALS)
def test_what_redis_refuses_for_good_stops_the_worker_at_start_up(
    guarded: RedisServer,
    tmp_path: Path,
    credentials: str,
    database: int,
    says: str,
    processes: str,
) -> None:
    """Wrong password, an ACL user without EVALSHA, `/99`: one line naming the setting."""
    url = with_credentials(guarded, credentials, database)

    status, lines = run_work(tmp_path, "--redis-url", url, "--processes", processes)

    assert status == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: --redis-url redis://"), lines
    assert "Redis refused" in lines[0]
    assert says in lines[0]
    assert PASSWORD not in lines[0]
    with redis.Redis(port=guarded.port, password=PASSWORD) as admin:
        assert admin.keys("cogworker:*") == []


CLIENT_REFUSALS = [
    pytest.param(":wrong-password", "refused the credentials", id="password"),
    pytest.param("noscripts:pw", "refused a command or key to this ACL user", id="acl"),
    pytest.param(f":{PASSWORD}", "refused a write: it is out of memory", id="out-of-memory"),
]


@pytest.mark.parametrize("kind", CLIENT_KINDS)
@pytest.mark.parametrize(("credentials", "says"), CLIENT_REFUSALS)
def test_the_client_says_what_redis_refused(
    guarded: RedisServer, credentials: str, says: str, kind: str
) -> None:
    """Wrong password, NOPERM, OOM: an EnqueueRefusedError (a RedisRefusedError) saying so,
    from either client.  Only the OOM case fills Redis: the client's first write (the layout
    number, see `cogworker migrate`) would meet OOM before the ACL's NOPERM on EVALSHA."""
    if "out of memory" in says:
        with redis.Redis(port=guarded.port, password=PASSWORD) as admin:
            admin.config_set("maxmemory", "1")
    config = cogworker.Config(redis_url=with_credentials(guarded, credentials))
    with pytest.raises(cogworker.EnqueueRefusedError, match=says) as info:
        enqueue_with(kind, config, Record, "x", jid="refused-1")
    assert isinstance(info.value, cogworker.RedisRefusedError)
    assert info.value.unknown == ("refused-1",)
    assert PASSWORD not in str(info.value)


@pytest.mark.parametrize("kind", CLIENT_KINDS)
def test_a_status_read_with_a_wrong_password_says_the_credentials_were_refused(
    guarded: RedisServer, kind: str
) -> None:
    """`status` of either client wraps an authentication refusal in a RedisRefusedError."""
    config = cogworker.Config(redis_url=with_credentials(guarded, ":wrong"))
    with pytest.raises(cogworker.RedisRefusedError, match="refused the credentials"):
        status_with(kind, config, "any")


def test_a_refusal_met_after_start_up_stops_the_worker(
    tmp_path: Path, guarded: RedisServer
) -> None:
    """Redis frozen while the worker starts (its start-up check can only wait), then answering
    with a refusal of the credentials: the worker stops, status 2, instead of retrying forever."""
    guarded.pause()
    url = with_credentials(guarded, ":wrong-password")
    worker = CogworkerProcess(["work", APP, "--redis-url", url], directory=tmp_path).start()
    try:
        wait_until(
            lambda: "registering with Redis failed" in worker.log_text(),
            60.0,
            message=worker.log_tail,
        )
        guarded.resume()
        status = worker.wait_for_exit(60.0)
    finally:
        worker.close()
    assert status == 2, worker.log_tail()
    assert "refused the credentials" in worker.log_text()
    assert "wrong-password" not in worker.log_text()
