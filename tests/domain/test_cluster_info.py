"""Properties of a cluster's combined INFO: sums, the youngest uptime, agreed or distinct
values, the primaries' count, and memory written as Redis writes it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.cluster_info import PRIMARIES, combined_info, human_bytes
from tests.domain.strategies import byte_counts, node_infos

clusters = st.lists(node_infos, min_size=1, max_size=6)


@pytest.mark.parametrize(
    ("count", "written"),
    [
        (0, "0B"),
        (1023, "1023B"),
        (1024, "1.00K"),
        (1536, "1.50K"),
        (1024**2 - 1, "1024.00K"),  # Redis rounds within the unit: it never moves up a unit
        (1024**2, "1.00M"),
        (1_153_576, "1.10M"),
        (3 * 1024**3 // 2, "1.50G"),
        (1024**4, "1.00T"),
        (1024**5, "1.00P"),
        (1024**6, f"{1024**6}B"),  # past Redis's last unit, bytes again
    ],
)
def test_human_bytes_writes_what_redis_writes(count: int, written: str) -> None:
    """Redis's own `bytesToHuman` figures, unit bounds included."""
    assert human_bytes(count) == written


@given(byte_counts)
def test_human_bytes_is_within_a_rounding_of_the_count(count: int) -> None:
    """Read back, a figure is the count to two decimals of its unit."""
    written = human_bytes(count)
    units = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5}
    if written.endswith("B"):
        assert int(written[:-1]) == count
        return
    unit = 1024 ** units[written[-1]]
    assert abs(float(written[:-1]) * unit - count) <= 0.005 * unit
    assert unit <= count < unit * 1024


@given(clusters)
def test_memory_and_connections_are_summed_and_uptime_is_the_youngest(
    nodes: list[dict[str, object]],
) -> None:
    """Memory (bytes and Redis's human figure) and connections: the sums; uptime: the smallest;
    and how many primaries."""
    combined = combined_info(nodes)

    def total(field: str) -> int:
        return sum(int(str(node[field])) for node in nodes)

    assert combined["used_memory"] == total("used_memory")
    assert combined["used_memory_human"] == human_bytes(total("used_memory"))
    assert combined["used_memory_peak_human"] == human_bytes(total("used_memory_peak"))
    assert combined["connected_clients"] == total("connected_clients")
    for uptime in ("uptime_in_days", "uptime_in_seconds"):
        assert combined[uptime] == min(int(str(node[uptime])) for node in nodes)
    assert combined[PRIMARIES] == len(nodes)


@given(clusters)
def test_a_field_is_its_one_value_or_the_distinct_ones(nodes: list[dict[str, object]]) -> None:
    """The version and the OS: one value when the primaries agree, else each once, in order."""
    combined = combined_info(nodes)
    for field in ("redis_version", "os"):
        distinct = list(dict.fromkeys(str(node[field]) for node in nodes))
        assert combined[field] == ", ".join(distinct)
        assert (", " in str(combined[field])) == (len(distinct) > 1)
    assert combined["redis_mode"] == "cluster"
    assert combined["mem_allocator"] == "jemalloc-5.3.0"


@given(node_infos)
def test_one_primary_s_info_is_its_own_with_the_count(node: dict[str, object]) -> None:
    """A one-primary cluster reads as that node (its human figures as Redis makes them)."""
    combined = combined_info([node])
    assert combined == {
        **node,
        "used_memory_human": human_bytes(int(str(node["used_memory"]))),
        "used_memory_peak_human": human_bytes(int(str(node["used_memory_peak"]))),
        PRIMARIES: 1,
    }


@given(clusters, st.data())
def test_a_figure_a_node_does_not_give_as_a_number_is_left_out(
    nodes: list[dict[str, object]], data: st.DataObject
) -> None:
    """A node without `used_memory`, or with a connections count that isn't a number: no sum
    (and no human figure) that would read as the whole cluster's; the others stay."""
    short = data.draw(st.integers(min_value=0, max_value=len(nodes) - 1))
    nodes[short] = {key: value for key, value in nodes[short].items() if key != "used_memory"}
    nodes[short]["connected_clients"] = data.draw(st.sampled_from([True, "12", None]))
    combined = combined_info(nodes)
    assert "used_memory" not in combined
    assert "used_memory_human" not in combined
    assert "connected_clients" not in combined
    assert "used_memory_peak_human" in combined
    assert combined[PRIMARIES] == len(nodes)


def test_no_primaries_is_a_count_of_none() -> None:
    """No INFO at all: nothing but the count, so every figure reads "n/a"."""
    assert combined_info([]) == {PRIMARIES: 0}
