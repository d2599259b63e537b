"""The embedded Redis: started only when nothing is configured or answering."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import embedded_redis
from cogworker.app.cli import ensure_redis
from tests.support.redis_server import RedisServer, free_port


@pytest.fixture
def default_url(tmp_path: Path) -> Iterator[str]:
    """A free address standing in for the default URL; any server started there is shut down."""
    url = f"redis://127.0.0.1:{free_port()}/0"
    yield url
    with contextlib.suppress(redis.RedisError):
        redis.Redis.from_url(url).shutdown(nosave=True)


@pytest.mark.processes
def test_nothing_configured_and_nothing_answering_starts_the_embedded_redis(
    default_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no URL configured and no server at the default one, the embedded Redis starts there."""
    monkeypatch.delenv("COGWORKER_REDIS_URL")
    assert ensure_redis(cogworker.Config(), default_url=default_url, data_dir=tmp_path / "data")
    assert embedded_redis.answers(default_url)
    server = redis.Redis.from_url(default_url)
    assert server.config_get("appendonly") == {"appendonly": "yes"}
    assert (tmp_path / "data" / "redis.log").exists()
    assert not ensure_redis(cogworker.Config(), default_url=default_url, data_dir=tmp_path / "x")


def test_a_configured_redis_is_never_swapped_for_the_embedded_one(
    default_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A configured (even unreachable) Redis means no embedded one is started."""
    monkeypatch.delenv("COGWORKER_REDIS_URL")
    config = cogworker.Config(redis_url="redis://127.0.0.1:1/0")
    assert not ensure_redis(config, default_url=default_url, data_dir=tmp_path / "data")
    assert not embedded_redis.answers(default_url)
    monkeypatch.setenv("COGWORKER_REDIS_URL", "redis://127.0.0.1:1/0")
    assert not ensure_redis(cogworker.Config(), default_url=default_url, data_dir=tmp_path / "d")
    assert not embedded_redis.answers(default_url)


def test_a_server_already_answering_at_the_default_url_is_used(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Something answering at the default URL means no embedded Redis."""
    monkeypatch.delenv("COGWORKER_REDIS_URL")
    assert not ensure_redis(cogworker.Config(), default_url=redis_server.url, data_dir=tmp_path)
    assert not (tmp_path / "redis.log").exists()
