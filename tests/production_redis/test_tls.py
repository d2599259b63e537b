"""TLS: a worker, a client, the dashboard and the pulse over rediss://, verified against a CA
made in the test; a CA that didn't sign the server's certificate is one clear error."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.worker import pulse
from tests.production_redis import drain
from tests.production_redis.jobs import Drain
from tests.production_redis.servers import Certificates, TlsServer
from tests.support.processes import CogworkerProcess, run_to_exit, wait_until
from tests.web.helpers import serving

APP = "tests.production_redis.jobs:config"


@pytest.fixture(scope="module")
def other_ca(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA that signed nothing the server has."""
    return Certificates.make(tmp_path_factory.mktemp("other-ca")).ca_file


def test_a_worker_a_client_and_the_dashboard_work_over_tls(
    tls_server: TlsServer, rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """The client (its CA in a Config field) enqueues, a worker on a rediss:// URL drains,
    the dashboard on `localhost` (the name checked against the certificate) shows it."""
    config = cogworker.Config(
        redis_url=f"rediss://127.0.0.1:{tls_server.tls_port}/0",
        redis_tls_ca_file=str(tls_server.certificates.ca_file),
    )
    client = cogworker.Client(config)
    mix = drain.Mix(plain=50, retried=5, scheduled=5, dead=2, unique=2)
    drain.enqueue(client, mix)
    client.close()
    command = ["work", APP, "--redis-url", tls_server.url()]
    env = {"COGWORKER_TEST_REDIS_URL": redis_url}
    with CogworkerProcess(command, directory=tmp_path, env=env) as worker:
        drain.wait_drained(rc, mix, worker)
        assert worker.terminate(30.0) == 0, worker.log_tail()

    with serving(tmp_path, "--redis-url", tls_server.url(host="localhost")) as base:
        page = httpx.get(base + "/dead", timeout=10)
    assert page.status_code == 200
    assert "tests.production_redis.jobs.Dies" in page.text
    assert f"rediss://localhost:{tls_server.tls_port}/0" in page.text


def test_the_pulse_beats_over_tls(tls_server: TlsServer) -> None:
    """The pulse process (its own RESP client) stamps a late beat through TLS."""
    with tls_server.server.client() as plain:
        plain.sadd(keys.PROCESSES, "p1")
        plain.hset(keys.process("p1"), "beat", "0")
        config = cogworker.Config(
            redis_url=tls_server.url(), heartbeat_interval=0.1, orphan_threshold=1.0
        )
        companion = pulse.start(config, config.redis_target(), "p1", logging.getLogger("test"))
        assert companion is not None
        try:
            wait_until(lambda: float(plain.hget(keys.process("p1"), "beat") or 0) > 0, 20)
        finally:
            companion.stop()
        assert companion.process.returncode == 0
        plain.delete(keys.PROCESSES, keys.process("p1"))


@pytest.mark.parametrize("command", ["work", "serve"])
def test_a_wrong_ca_stops_work_and_serve_in_one_line(
    tls_server: TlsServer, other_ca: Path, tmp_path: Path, command: str
) -> None:
    """A CA that didn't sign the certificate: exit status 2, one line naming the flag, the
    host and the reason; never a quiet fall back to plain TCP."""
    url = tls_server.url(ca_file=other_ca)
    arguments = [command, APP, "--redis-url", url]

    status, lines = run_to_exit(tmp_path, *arguments)

    assert status == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"Error: --redis-url rediss://127.0.0.1:{tls_server.tls_port}/0")
    assert "Redis's TLS certificate doesn't verify: self-signed certificate" in lines[0]


def test_a_wrong_ca_is_a_refusal_for_the_client(tls_server: TlsServer, other_ca: Path) -> None:
    """The client's enqueue raises EnqueueRefusedError naming the setting and the reason."""
    client = cogworker.Client(cogworker.Config(redis_url=tls_server.url(ca_file=other_ca)))
    try:
        with pytest.raises(cogworker.EnqueueRefusedError) as info:
            client.enqueue(Drain, 1, jid="tls-1")
    finally:
        client.close()
    assert str(info.value).startswith("can't enqueue: Config.redis_url rediss://127.0.0.1:")
    assert "TLS certificate doesn't verify" in str(info.value)
    assert info.value.unknown == ("tls-1",)
