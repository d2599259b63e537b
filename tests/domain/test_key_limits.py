"""Per-key limits' rules (`domain.key_limits`): the records refuse bad numbers naming them,
a key must be a short text, a claim survives its payload field, and a refused job's wait
grows with its refusals, within its bounds, never before its key frees."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain import key_limits
from cogworker.domain.key_limits import Claim, Concurrency, Rate

seconds = st.floats(min_value=0.001, max_value=1e6, allow_nan=False)
limits = st.one_of(
    st.builds(Concurrency, max=st.integers(1, 100), wait=seconds, longest_wait=seconds),
    st.builds(Rate, max=st.integers(1, 100), per=seconds, wait=seconds, longest_wait=seconds),
)
names = st.text(min_size=1, max_size=30).filter(lambda name: ":" not in name)
claims = st.builds(
    Claim,
    kind=st.sampled_from(["concurrency", "rate"]),
    name=names,
    key=st.text(max_size=key_limits.LONGEST_KEY),
    waits=st.integers(0, 10_000),
)
jitters = st.floats(min_value=0, max_value=1, exclude_max=True)


@given(claims)
def test_a_claim_survives_its_payload_field(claim: Claim) -> None:
    """What `payload_fields` writes, `claim_of` reads back as it was."""
    assert key_limits.claim_of(key_limits.payload_fields(claim)) == claim


def test_a_payload_without_a_limit_has_no_claim() -> None:
    """No `limit` field: no claim."""
    assert key_limits.claim_of({"unique": "until_executed"}) is None


@pytest.mark.parametrize(
    ("field", "named"),
    [
        ("x", "'x'"),
        ({"kind": "burst", "name": "n", "key": "k"}, "'burst'"),
        ({"kind": "rate", "name": "a:b", "key": "k"}, "'a:b'"),
        ({"kind": "rate", "name": "n", "key": 7}, "7"),
        ({"kind": "rate", "name": "n", "key": "k", "waits": -1}, "-1"),
        ({"kind": "rate", "name": "n", "key": "k", "waits": True}, "True"),
    ],
)
def test_a_payloads_unreadable_limit_is_an_error_naming_it(field: object, named: str) -> None:
    """A limit field another program wrote wrong is refused with its value in the message."""
    with pytest.raises(ValueError, match=named):
        key_limits.claim_of({"limit": field})


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3", None])
def test_a_max_below_one_or_not_whole_is_refused(bad: object) -> None:
    """`max` < 1 (or not a whole number) is refused naming it, for both kinds."""
    with pytest.raises(ValueError, match=f"max must be a whole number ≥ 1, got {bad!r}"):
        Concurrency(max=bad)  # type: ignore[arg-type]  # what a user may pass
    with pytest.raises(ValueError, match="max must be"):
        Rate(max=bad, per=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, -1.5, math.inf, math.nan, True, "60"])
def test_a_per_not_positive_is_refused(bad: object) -> None:
    """`per` ≤ 0 (or not a finite number) is refused naming it."""
    with pytest.raises(ValueError, match=r"per must be a positive, finite number of seconds"):
        Rate(max=1, per=bad)  # type: ignore[arg-type]  # what a user may pass


def test_a_key_that_is_no_callable_and_a_bad_name_are_refused() -> None:
    """The key must be callable; a name must be a text without ':'."""
    with pytest.raises(ValueError, match="got 'tenant'"):
        Concurrency(max=1, key="tenant")  # type: ignore[arg-type]  # what a user may pass
    with pytest.raises(ValueError, match="got 'a:b'"):
        Concurrency(max=1, name="a:b")
    with pytest.raises(ValueError, match=r"limit must be cogworker\.Concurrency"):
        key_limits.checked_limit(3)


@pytest.mark.parametrize("value", [3, None, b"k", ["k"]])
def test_a_key_that_is_no_text_is_refused_naming_it(value: object) -> None:
    """A key function returning anything but a str: a TypeError naming the value."""
    with pytest.raises(TypeError, match=re.escape(f"returned {value!r}")):
        key_limits.checked_key(value, "app.Fetch")


def test_a_key_too_long_is_refused() -> None:
    """A key longer than LONGEST_KEY becomes no Redis key."""
    with pytest.raises(TypeError, match="at most"):
        key_limits.checked_key("k" * (key_limits.LONGEST_KEY + 1), "app.Fetch")
    assert key_limits.checked_key("k" * key_limits.LONGEST_KEY, "app.Fetch")


@given(limits, st.integers(1, 200), st.floats(0, 1e6), jitters)
def test_a_wait_is_within_its_bounds(
    limit: key_limits.Limit, waits: int, free_in: float, jitter: float
) -> None:
    """A wait is never before the key frees, at least the first wait (or longest, if
    shorter), and at most half again the longer of the longest wait and `free_in`."""
    delay = key_limits.wait_delay(limit, waits, free_in, jitter)
    assert delay >= free_in
    assert delay >= min(limit.wait, limit.longest_wait)
    assert delay <= max(limit.longest_wait, free_in) * 1.5


@given(limits, st.integers(1, 200), jitters)
def test_a_wait_grows_while_the_key_stays_full(
    limit: key_limits.Limit, waits: int, jitter: float
) -> None:
    """One more refusal in a row never shortens the wait (the same jitter drawn)."""
    shorter = key_limits.wait_delay(limit, waits, 0.0, jitter)
    assert key_limits.wait_delay(limit, waits + 1, 0.0, jitter) >= shorter


def test_a_wait_doubles_up_to_the_longest() -> None:
    """0.5 s, 1 s, 2 s, ... up to `longest_wait`, before the jitter."""
    limit = Concurrency(max=1, wait=0.5, longest_wait=3.0)
    assert [key_limits.wait_delay(limit, n, 0.0, 0.0) for n in range(1, 6)] == [
        0.5,
        1.0,
        2.0,
        3.0,
        3.0,
    ]


@given(limits, st.integers(1, 200), st.floats(0, 1e6), jitters)
def test_a_refused_job_counts_as_waiting_past_its_next_look(
    limit: key_limits.Limit, waits: int, free_in: float, jitter: float
) -> None:
    """The waiting horizon outlasts every wait a limit gives (a rate's up to its window)."""
    free_in = min(free_in, getattr(limit, "per", 0.0))
    delay = key_limits.wait_delay(limit, waits, free_in, jitter)
    assert key_limits.waiting_horizon(limit) > delay


@given(claims)
def test_a_refusal_counts_one_more_wait(claim: Claim) -> None:
    """`refused` adds one to the refusals in a row and changes nothing else."""
    after = key_limits.refused(claim)
    assert after.waits == claim.waits + 1
    assert (after.kind, after.name, after.key) == (claim.kind, claim.name, claim.key)


def test_a_claim_is_governed_by_its_class_limit_of_the_same_kind_and_name() -> None:
    """A job runs under its class's limit only while that limit is the one it claimed."""
    claim = key_limits.claim_for(Concurrency(max=2), "app.Fetch", "k")
    assert claim == Claim(kind="concurrency", name="app.Fetch", key="k")
    assert key_limits.governs(Concurrency(max=5), claim, "app.Fetch")
    assert not key_limits.governs(Rate(max=5, per=1), claim, "app.Fetch")
    assert not key_limits.governs(Concurrency(max=5, name="other"), claim, "app.Fetch")
    assert not key_limits.governs(None, claim, "app.Fetch")
