"""Properties of the queue order: strict when weights are equal, weighted random otherwise."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.queues import (
    LONGEST_NAME,
    NAME_RULE,
    QueuePlan,
    checked_name,
    fetch_order,
    name_problem,
    parse_queue,
    plan_of,
)

queue_names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-.", min_size=1, max_size=12)
seeds = st.integers(min_value=0, max_value=2**32)


def distinct_names(min_size: int = 1) -> st.SearchStrategy[list[str]]:
    """Lists of distinct queue names."""
    return st.lists(queue_names, min_size=min_size, max_size=8, unique=True)


@st.composite
def weighted_plans(draw: st.DrawFn) -> QueuePlan:
    """A plan with at least two different weights (so weighted, not strict)."""
    names = draw(distinct_names(min_size=2))
    weights = draw(st.lists(st.integers(1, 10), min_size=len(names), max_size=len(names)))
    if len(set(weights)) == 1:
        weights[0] += 1
    return plan_of(list(zip(names, weights, strict=True)))


class Fixed:
    """A random source that always returns the same number."""

    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


@given(distinct_names(), st.integers(1, 10), seeds)
def test_equal_weights_mean_strict_order(names: list[str], weight: int, seed: int) -> None:
    """With every weight the same, the order is the configured order, every time."""
    plan = plan_of([(name, weight) for name in names])
    assert plan.strict
    assert fetch_order(plan, random.Random(seed)) == tuple(names)


@given(weighted_plans(), seeds)
def test_weighted_order_is_a_permutation(plan: QueuePlan, seed: int) -> None:
    """A weighted order visits every queue exactly once."""
    assert not plan.strict
    order = fetch_order(plan, random.Random(seed))
    assert sorted(order) == sorted(plan.names)


@given(weighted_plans(), st.floats(min_value=0, max_value=1, exclude_max=True))
def test_weighted_order_copes_with_any_draw(plan: QueuePlan, draw: float) -> None:
    """Even a draw at the very edges of [0, 1) gives a permutation."""
    order = fetch_order(plan, Fixed(draw))
    assert sorted(order) == sorted(plan.names)


@pytest.mark.parametrize("weights", [(3, 1), (1, 3), (5, 3, 2), (1, 1, 8), (10, 1, 1, 1)], ids=str)
def test_first_queue_frequency_approaches_its_weight_share(weights: tuple[int, ...]) -> None:
    """Over many fetches each queue comes first about as often as its share of the weight."""
    plan = plan_of([(f"q{i}", weight) for i, weight in enumerate(weights)])
    rng = random.Random(20240601)  # seeded: the same draws every run
    draws = 20_000
    firsts = [fetch_order(plan, rng)[0] for _ in range(draws)]
    for i, weight in enumerate(weights):
        share = weight / sum(weights)
        assert firsts.count(f"q{i}") / draws == pytest.approx(share, abs=0.03)


def test_a_heavier_queue_is_never_starving_a_light_one() -> None:
    """A light queue still comes first sometimes: weighted order doesn't starve it."""
    plan = plan_of(["heavy,100", "light,1"])
    rng = random.Random(7)
    assert any(fetch_order(plan, rng)[0] == "light" for _ in range(5_000))


@given(distinct_names(), st.data(), seeds)
def test_strict_order_skips_paused_queues(names: list[str], data: st.DataObject, seed: int) -> None:
    """Strict order over paused queues: the configured order with the paused ones left out."""
    paused = frozenset(data.draw(st.sets(st.sampled_from(names))))
    order = fetch_order(plan_of(names), random.Random(seed), paused)
    assert order == tuple(name for name in names if name not in paused)


@given(weighted_plans(), st.data(), seeds)
def test_weighted_order_visits_each_unpaused_queue_once(
    plan: QueuePlan, data: st.DataObject, seed: int
) -> None:
    """A weighted order over paused queues visits every other queue exactly once."""
    paused = frozenset(data.draw(st.sets(st.sampled_from(plan.names))))
    order = fetch_order(plan, random.Random(seed), paused)
    assert sorted(order) == sorted(set(plan.names) - paused)


def test_pausing_the_heavy_queue_keeps_the_others_weighted() -> None:
    """With the heavy queue paused, the equally weighted others still take turns first:
    the plan stays weighted, it doesn't turn strict and starve the later queue."""
    plan = plan_of(["heavy,5", "a,1", "b,1"])
    rng = random.Random(11)  # seeded: the same draws every run
    firsts = {fetch_order(plan, rng, frozenset({"heavy"}))[0] for _ in range(200)}
    assert firsts == {"a", "b"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("default", ("default", 1)), ("critical,5", ("critical", 5)), (" low ,2", ("low", 2))],
)
def test_parse_queue(text: str, expected: tuple[str, int]) -> None:
    """`name` or `name,weight` as given on the command line."""
    assert parse_queue(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [(",3", "name is empty"), ("q,x", "whole number"), ("q,0", "1 or more"), ("q,-2", "1 or more")],
)
def test_parse_queue_refuses_nonsense(text: str, message: str) -> None:
    """An empty name or a weight that isn't a whole number >= 1 is refused, saying why."""
    with pytest.raises(ValueError, match=message):
        parse_queue(text)


def test_a_plan_needs_a_queue() -> None:
    """A worker with no queue at all is a configuration error."""
    with pytest.raises(ValueError, match="at least one queue"):
        plan_of([])


def test_a_queue_listed_twice_is_refused() -> None:
    """The same queue twice is a configuration error naming it."""
    with pytest.raises(ValueError, match="'a'"):
        plan_of(["a", ("b", 2), "a,3"])


@given(distinct_names())
def test_plain_names_weigh_the_same(names: list[str]) -> None:
    """Names without weights give a strict plan in the given order."""
    plan = plan_of(names)
    assert plan.strict
    assert plan.names == tuple(names)


@pytest.mark.parametrize(
    ("name", "broken"),
    [
        ("", "the name is empty"),
        ("tab\there", "control character"),
        ("bell\x07", "control character"),
        ("c1\x85", "control character"),
        ("x" * 501, "501 characters long"),
        (" padded", "starts or ends with a space"),
        ("a,b", "comma"),
        (7, "not a string"),
    ],
)
def test_a_name_the_dashboard_could_not_reach_is_refused_naming_the_rule(
    name: object, broken: str
) -> None:
    """Control characters, more than 500 characters, spaces at an end, a comma: refused with
    the part of the rule broken and the whole rule."""
    with pytest.raises(ValueError, match=broken) as refused:
        checked_name(name)
    assert NAME_RULE in str(refused.value)


@given(st.text(min_size=1, max_size=LONGEST_NAME).filter(lambda name: name_problem(name) is None))
def test_a_name_that_keeps_the_rule_is_accepted_as_it_is(name: str) -> None:
    """Any name the rule allows passes unchanged, as a class option and in a worker's plan."""
    assert checked_name(name) == name
    assert plan_of([name]).names == (name,)
