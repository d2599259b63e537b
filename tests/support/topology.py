"""Where a test's Redis lives: one redis-server, or the local Redis Cluster (issue #22).

The engine, policy, unique, periodic, tracking and fault suites run on both
(tests/support/topology_marks.py says which tests): the `topology` fixture
picks one, and the fixtures built on it (`redis_url`, `rc`, `client`,
`client_config`, ...) give the single node's `redis://` URL or the cluster's
`redis+cluster://` one.  The jobs the workers run record their side effects in
the same Redis, through `plain_client`, so a test reads them with `rc` whatever
the topology.  Worker processes import this module: it imports no pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode
from redis.retry import Retry

from cogworker.adapters.redis_client import RedisClient

if TYPE_CHECKING:
    from tests.support.cluster import LocalCluster

Topology = Literal["single", "cluster"]
TOPOLOGIES: tuple[Topology, ...] = get_args(Topology)
CLUSTER_SCHEME = "redis+cluster"

#: Commands redis-py sends to one node of a cluster that a test means of the whole data set.
_EVERY_PRIMARY = ("KEYS", "DBSIZE")


def cluster_url(cluster: LocalCluster) -> str:
    """A `redis+cluster://` URL naming every node of `cluster`."""
    nodes = ",".join(f"{host}:{port}" for host, port in cluster.addresses)
    return f"{CLUSTER_SCHEME}://{nodes}/0"


def plain_client(url: str, **options: Any) -> RedisClient:
    """A redis-py client of `url` returning bytes (`options` for its constructor; a 10 s
    socket timeout unless they say): a `redis.RedisCluster` for a `redis+cluster://` URL,
    retrying nothing but MOVED and ASK unless `options` say, on which KEYS and DBSIZE cover
    every primary (redis-py asks one node); else a `redis.Redis`."""
    options.setdefault("socket_timeout", 10.0)
    parts = urlsplit(url)
    if parts.scheme != CLUSTER_SCHEME:
        return redis.Redis.from_url(url, **options)
    options.setdefault("retry", Retry(NoBackoff(), 0))
    nodes = [address.rpartition(":") for address in parts.netloc.split(",")]
    client = redis.RedisCluster(
        startup_nodes=[ClusterNode(host, int(port)) for host, _, port in nodes], **options
    )
    for command in _EVERY_PRIMARY:
        client.command_flags[command] = redis.RedisCluster.PRIMARIES
    return client


def flushed_url(url: str) -> str:
    """`url`, its data flushed first (every primary of a cluster)."""
    with plain_client(url) as client:
        client.flushall()
    return url
