"""Production-shaped Redis for tests: TLS with a CA made in the test, and Sentinel.

Every server is Debian's `redis-server` on loopback, started and stopped by
the test (see tests/support/redis_server.py): TLS with `--tls-port` and
certificates from `trustme`; Sentinel as a primary, a replica and three
`redis-server --sentinel` processes that must agree (quorum 2) to fail over.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import redis
import trustme

from tests.support.processes import wait_until
from tests.support.redis_server import HOST, RedisServer, free_port

MASTER = "mymaster"
#: How long the sentinels wait before they call an unanswering primary down.
DOWN_AFTER_MS = 1000


@attrs.frozen
class Certificates:
    """A CA and a server certificate for 127.0.0.1 and localhost, as PEM files."""

    ca_file: Path
    cert_file: Path
    key_file: Path

    @classmethod
    def make(cls, directory: Path) -> Certificates:
        """A new CA in `directory`, and a server certificate it signed."""
        directory.mkdir(parents=True, exist_ok=True)
        authority = trustme.CA()
        server = authority.issue_cert(HOST, "localhost")
        ca_file, cert_file, key_file = (
            directory / name for name in ("ca.pem", "cert.pem", "key.pem")
        )
        authority.cert_pem.write_to_path(str(ca_file))
        server.cert_chain_pems[0].write_to_path(str(cert_file))
        server.private_key_pem.write_to_path(str(key_file))
        return cls(ca_file, cert_file, key_file)


@attrs.define
class TlsServer:
    """A redis-server speaking TLS on `tls_port` (and plain TCP on its port, for set-up)."""

    server: RedisServer
    tls_port: int
    certificates: Certificates

    @classmethod
    def start(cls, directory: Path) -> TlsServer:
        """Certificates and a server using them, in `directory`."""
        certificates = Certificates.make(directory)
        tls_port = free_port()
        server = RedisServer(
            directory,
            extra_args=[
                "--tls-port", str(tls_port),
                "--tls-cert-file", str(certificates.cert_file),
                "--tls-key-file", str(certificates.key_file),
                "--tls-ca-cert-file", str(certificates.ca_file),
                "--tls-auth-clients", "no",
            ],
        ).start()  # fmt: skip
        return cls(server, tls_port, certificates)

    def url(self, host: str = HOST, ca_file: Path | None = None) -> str:
        """A rediss:// URL trusting `ca_file` (default: the server's own CA)."""
        ca = ca_file or self.certificates.ca_file
        return f"rediss://{host}:{self.tls_port}/0?tls_ca_file={ca}"


@attrs.define
class SentinelTopology:
    """A primary, its replicas and three sentinels watching them as `MASTER`."""

    primary: RedisServer
    replicas: list[RedisServer]
    sentinels: list[RedisServer]

    @classmethod
    def start(cls, directory: Path, replicas: int = 1) -> SentinelTopology:
        """Start them all and wait until the sentinels know the replicas and each other."""
        primary = _server(directory / "primary").start()
        topology = cls(primary, [], [])
        for index in range(replicas):
            name = "replica" if index == 0 else f"replica-{index}"
            args = ("--replicaof", HOST, str(primary.port))
            topology.replicas.append(_server(directory / name, *args).start())
        for index in range(3):
            topology.sentinels.append(_sentinel(directory / f"sentinel-{index}", primary.port))
        wait_until(topology._ready, 30.0, message="the sentinels never saw the replicas and peers")
        return topology

    @property
    def replica(self) -> RedisServer:
        """The first replica."""
        return self.replicas[0]

    def url(self, db: int = 0, master: str = MASTER) -> str:
        """The redis+sentinel:// URL of this topology."""
        hosts = ",".join(f"{HOST}:{sentinel.port}" for sentinel in self.sentinels)
        return f"redis+sentinel://{hosts}/{master}/{db}"

    def primary_port(self) -> int | None:
        """The port of the server the first answering sentinel calls the primary now."""
        for sentinel in self.sentinels:
            try:
                with sentinel.client(socket_timeout=2.0) as client:
                    address = client.sentinel_get_master_addr_by_name(MASTER)
            except redis.RedisError:
                continue
            if address:
                return int(address[1])
        return None

    def replica_offsets(self) -> dict[int, int]:
        """How far into the primary's replication stream each replica is, by its port."""
        offsets = {}
        for replica in self.replicas:
            with replica.client(socket_timeout=2.0) as client:
                offsets[replica.port] = int(client.info("replication")["master_repl_offset"])
        return offsets

    def close(self) -> None:
        """Stop every process."""
        for server in [*self.sentinels, *self.replicas, self.primary]:
            server.close()

    def _ready(self) -> bool:
        for replica in self.replicas:
            with replica.client(socket_timeout=2.0) as client:
                if client.info("replication").get("master_link_status") != "up":
                    return False
        for sentinel in self.sentinels:
            with sentinel.client(socket_timeout=2.0) as client:
                state = client.sentinel_master(MASTER)
                if state["num-slaves"] < len(self.replicas) or state["num-other-sentinels"] < 2:
                    return False
        return True


def _server(directory: Path, *extra_args: str) -> RedisServer:
    directory.mkdir(parents=True)
    return RedisServer(directory, extra_args=extra_args)


def _sentinel(directory: Path, primary_port: int) -> RedisServer:
    directory.mkdir(parents=True)
    config = directory / "sentinel.conf"
    config.write_text(
        f"sentinel monitor {MASTER} {HOST} {primary_port} 2\n"
        f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
        f"sentinel failover-timeout {MASTER} 10000\n"
        f"sentinel parallel-syncs {MASTER} 1\n"
    )
    return RedisServer(directory, config_file=config, extra_args=["--sentinel"]).start()
