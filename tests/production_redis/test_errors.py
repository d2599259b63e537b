"""Every connection mistake is one clear message naming the setting, from `cogworker work`,
`cogworker serve` and the client alike (the TLS and Sentinel ones are in their modules)."""

from __future__ import annotations

from pathlib import Path

import pytest

import cogworker
from tests.production_redis.jobs import Unique
from tests.support.processes import CogworkerProcess, run_to_exit, wait_until
from tests.support.redis_server import RedisServer, RedisServerFactory

APP = "tests.production_redis.jobs:config"
#: Nothing answers on port 1: every sentinel is unreachable.
NO_SENTINELS = "redis+sentinel://127.0.0.1:1,127.0.0.1:1/mymaster/0"


@pytest.fixture
def guarded(redis_server_factory: RedisServerFactory) -> RedisServer:
    """A server whose user `noscripts` may do everything but run scripts."""
    server = redis_server_factory()
    with server.client() as admin:
        admin.execute_command(
            "ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "+@all", "-evalsha", "-eval"
        )
    return server


def url_of(server: RedisServer, credentials: str) -> str:
    """The server's URL with `user:password`."""
    return f"redis://{credentials}@127.0.0.1:{server.port}/0"


MISTAKES = [
    pytest.param("nobody:pw", "Redis refused the credentials", id="unknown-user"),
    pytest.param("noscripts:wrong", "Redis refused the credentials", id="wrong-password"),
]


@pytest.mark.parametrize("command", ["work", "serve"])
@pytest.mark.parametrize(("credentials", "says"), MISTAKES)
def test_an_unknown_user_or_a_wrong_password_is_one_line(
    guarded: RedisServer, tmp_path: Path, command: str, credentials: str, says: str
) -> None:
    """Exit status 2, one line: the flag, the URL without the password, what was refused."""
    status, lines = run_to_exit(tmp_path, command, APP, "--redis-url", url_of(guarded, credentials))

    assert status == 2, lines
    assert len(lines) == 1, lines
    user = credentials.partition(":")[0]
    assert lines[0].startswith(f"Error: --redis-url redis://{user}:***@127.0.0.1:"), lines
    assert says in lines[0]
    assert "the ACL user doesn't exist, is off, or the password is wrong" in lines[0]


def test_a_forbidden_command_names_the_rule_to_add(guarded: RedisServer, tmp_path: Path) -> None:
    """A worker whose user may not run EVALSHA: the command, and `+evalsha` to add."""
    status, lines = run_to_exit(
        tmp_path, "work", APP, "--redis-url", url_of(guarded, "noscripts:pw")
    )

    assert status == 2, lines
    assert "no permissions to run the 'evalsha' command" in lines[0]
    assert "add +evalsha to the user's rules (ACL SETUSER)" in lines[0]


def test_the_client_names_the_setting_and_the_rule(guarded: RedisServer) -> None:
    """The client's EnqueueRefusedError says Config.redis_url, the command and the rule (a
    unique job's push is a script; a plain one's an LPUSH, which this user may send)."""
    client = cogworker.Client(cogworker.Config(redis_url=url_of(guarded, "noscripts:pw")))
    try:
        with pytest.raises(cogworker.EnqueueRefusedError) as info:
            client.enqueue(Unique, 1)
    finally:
        client.close()
    message = str(info.value)
    assert message.startswith("can't enqueue: Config.redis_url redis://noscripts:***@"), message
    assert "add +evalsha to the user's rules" in message


@pytest.mark.processes
@pytest.mark.parametrize("command", ["work", "serve"])
def test_an_unknown_scheme_is_one_line(tmp_path: Path, command: str) -> None:
    """`--redis-url sentinel://...`: the schemes cogworker knows."""
    status, lines = run_to_exit(tmp_path, command, APP, "--redis-url", "sentinel://h:26379/m")

    assert status == 2, lines
    assert lines == [
        "Error: --redis-url 'sentinel://h:26379/m': the scheme of a Redis URL is one of "
        "redis://, rediss://, unix://, redis+sentinel://, rediss+sentinel://, "
        "redis+cluster://, rediss+cluster://"
    ]


def test_the_client_refuses_an_unknown_scheme_naming_the_field() -> None:
    """Config(redis_url='sentinel://...') is a ConfigError naming Config.redis_url."""
    with pytest.raises(cogworker.ConfigError, match=r"^Config.redis_url 'sentinel://h/m': the"):
        cogworker.Config(redis_url="sentinel://h/m")


@pytest.mark.processes
def test_unreachable_sentinels_are_waited_for_and_said(tmp_path: Path) -> None:
    """No sentinel answers: an outage, not a setting; the worker waits and its log names the
    setting and the sentinels; the client raises RedisUnavailableError saying the same."""
    env = {"COGWORKER_WORK_REDIS_URL": NO_SENTINELS}
    with CogworkerProcess(["work", APP], directory=tmp_path, env=env) as worker:
        wait_until(
            lambda: "no sentinel answers: 127.0.0.1:1" in worker.log_text(),
            30.0,
            message=worker.log_tail,
        )
        assert worker.is_running
        assert f"$COGWORKER_WORK_REDIS_URL {NO_SENTINELS}" in worker.log_text()
    client = cogworker.Client(cogworker.Config(redis_url=NO_SENTINELS))
    try:
        with pytest.raises(cogworker.RedisUnavailableError, match="no sentinel answers"):
            client.status("any")
    finally:
        client.close()
