"""Properties of the JSON-native check on job arguments."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogworker.domain.json_values import JSON, MAX_DEPTH, first_non_json, is_json_native
from tests.domain.strategies import json_values


@given(json_values)
def test_json_values_pass(value: JSON) -> None:
    """Anything made of JSON's own types passes, and survives a JSON round trip."""
    assert first_non_json(value, "args") is None
    assert is_json_native(value)
    assert json.loads(json.dumps(value)) == value


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ((1, 2), ("args", "tuple")),
        ({1, 2}, ("args", "set")),
        (b"raw", ("args", "bytes")),
        (math.nan, ("args", "float nan")),
        (math.inf, ("args", "float inf")),
        (-math.inf, ("args", "float -inf")),
        (object(), ("args", "object")),
        ([1, [2, (3,)]], ("args[1][1]", "tuple")),
        ({"a": {"b": {1}}}, ("args['a']['b']", "set")),
        ({1: "x"}, ("args key 1", "int")),
        ({"ok": 1, None: 2}, ("args key None", "NoneType")),
    ],
)
def test_the_first_non_json_part_is_named(value: object, found: tuple[str, str]) -> None:
    """The path and type of what JSON can't carry are reported, for the enqueue error."""
    assert first_non_json(value, "args") == found
    assert not is_json_native(value)


@given(
    json_values,
    st.sampled_from([(1,), {1}, b"x", math.nan, object(), frozenset()]),
    st.lists(st.integers(0, 3), max_size=4),
)
def test_a_bad_part_anywhere_is_found(value: JSON, bad: object, route: list[int]) -> None:
    """A value JSON can't carry is found however deep in a structure it sits."""
    holder: list[object] = [value]
    container = holder
    for index in route:
        inner: list[object] = [None] * (index + 1)
        container.append(inner)
        container = inner
    container.append({"k": bad})
    assert first_non_json(holder, "args") is not None
    assert not is_json_native(holder)


@given(json_values)
def test_the_path_points_at_the_bad_part(value: JSON) -> None:
    """The reported path leads to the offending value, whatever valid JSON comes before it."""
    holder = [value, {"x": [(1, 2)]}]
    assert first_non_json(holder, "args") == ("args[1]['x'][0]", "tuple")


SURROGATE = "report-\udcff.csv"


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ([SURROGATE], "args[0]"),
        ([{SURROGATE: 1}], "args[0] key 'report-\\udcff.csv'"),
        ([{"k": ["ok", SURROGATE]}], "args[0]['k'][1]"),
    ],
)
def test_a_lone_surrogate_is_refused_where_it_is(value: list[object], where: str) -> None:
    """A str that isn't valid Unicode (a key too) isn't JSON-native, and its path is named."""
    assert not is_json_native(value)
    found = first_non_json(value, "args")
    assert found is not None
    assert found[0] == where
    assert "lone surrogate" in found[1]


@pytest.mark.parametrize("wrap", [lambda inner: [inner], lambda inner: {"k": inner}])
def test_nesting_past_the_limit_is_refused(wrap: Callable[[object], object]) -> None:
    """MAX_DEPTH levels below the argument list pass; one more is refused, by path."""
    value: object = 1
    for _ in range(MAX_DEPTH - 1):
        value = wrap(value)
    assert is_json_native([value])
    assert first_non_json([value], "args") is None
    deeper = [wrap(value)]
    assert not is_json_native(deeper)
    found = first_non_json(deeper, "args")
    assert found is not None
    assert f"nested more than {MAX_DEPTH} levels deep" in found[1]


def test_non_ascii_text_that_is_valid_unicode_passes() -> None:
    """Accents and emoji are fine: only lone surrogates are refused."""
    assert is_json_native(["é", {"ключ": "🎉"}])
