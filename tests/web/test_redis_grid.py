"""The Redis grids' labels: a single server's exactly as before the cluster's combined INFO,
a cluster's with its primaries' count after them."""

from __future__ import annotations

import pytest

from cogworker.app.web.about import REDIS_FIELDS, SERVER_FIELDS, redis_section
from cogworker.domain.cluster_info import combined_info

#: One server's INFO as redis-py parses it (the fields the grids show, and one they don't).
SERVER_INFO: dict[str, object] = {
    "redis_version": "7.0.15",
    "redis_mode": "standalone",
    "os": "Linux 6.1.0 x86_64",
    "uptime_in_days": 3,
    "connected_clients": 4,
    "used_memory": 1_153_576,
    "used_memory_human": "1.10M",
    "used_memory_peak": 2_097_152,
    "used_memory_peak_human": "2.00M",
    "mem_allocator": "jemalloc-5.3.0",
}


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        (
            REDIS_FIELDS,
            {
                "Server version": "7.0.15",
                "Uptime (days)": "3",
                "Connections": "4",
                "Memory Usage": "1.10M",
                "Peak Memory Usage": "2.00M",
            },
        ),
        (
            SERVER_FIELDS,
            {
                "Server version": "7.0.15",
                "Mode": "standalone",
                "Operating system": "Linux 6.1.0 x86_64",
                "Uptime (days)": "3",
            },
        ),
    ],
)
def test_a_single_server_s_grid_has_no_cluster_card(
    fields: dict[str, str], shown: dict[str, str]
) -> None:
    """Label for label and in order, what the grids showed before clusters were combined."""
    assert list(redis_section(SERVER_INFO, fields).items()) == list(shown.items())


def test_a_cluster_s_grid_combines_its_primaries_and_counts_them() -> None:
    """Three primaries, one of them younger and upgraded: sums, the youngest uptime, both
    versions, and "Primaries" last."""
    younger = {**SERVER_INFO, "redis_version": "7.2.4", "uptime_in_days": 0}
    nodes = [SERVER_INFO, younger, SERVER_INFO]
    assert list(redis_section(combined_info(nodes)).items()) == [
        ("Server version", "7.0.15, 7.2.4"),
        ("Uptime (days)", "0"),
        ("Connections", "12"),
        ("Memory Usage", "3.30M"),
        ("Peak Memory Usage", "6.00M"),
        ("Primaries", "3"),
    ]
    assert list(redis_section(combined_info(nodes), SERVER_FIELDS))[-1] == "Primaries"
