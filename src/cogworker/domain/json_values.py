"""JSON-native values: what a job's arguments may hold."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TypeAlias

JSON: TypeAlias = "bool | int | float | str | list[JSON] | dict[str, JSON] | None"

# One encoder for every compact record: `json.dumps` with options builds a new
# one per call, which is a measurable share of a job's cost.  Values written
# through it are checked JSON-native first, so a cycle can't occur.
_COMPACT = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)

_SCALARS = (str, int, float, bool, type(None))


def is_json_native(value: object) -> bool:
    """Whether JSON carries `value` as is (see `first_non_json`, which says where it doesn't).

    The quick check every enqueued argument list goes through: no path is
    built unless something is wrong.
    """
    if type(value) is float:
        return math.isfinite(value)
    if type(value) in _SCALARS:
        return True
    if type(value) is list:
        return all(is_json_native(item) for item in value)
    if type(value) is dict:
        return all(isinstance(key, str) and is_json_native(item) for key, item in value.items())
    return False


def first_non_json(value: object, path: str) -> tuple[str, str] | None:
    """The path and type of the first part of `value` that JSON can't carry as is.

    Tuples are refused too: they come back as lists, so a job would see
    something other than what it was given.  Dict keys must be strings, and
    NaN and the infinities aren't JSON (the stdlib would write them anyway).
    """
    if isinstance(value, float) and not math.isfinite(value):
        return path, f"float {value!r}"
    if type(value) in _SCALARS:
        return None  # exact types: an IntEnum or str subclass would come back as a plain one
    if type(value) is list:
        return _first_of((f"{path}[{index}]", item) for index, item in enumerate(value))
    if type(value) is dict:
        for key in value:
            if not isinstance(key, str):
                return f"{path} key {key!r}", type(key).__name__
        return _first_of((f"{path}[{key!r}]", item) for key, item in value.items())
    return path, type(value).__name__


def _first_of(parts: Iterable[tuple[str, object]]) -> tuple[str, str] | None:
    for path, item in parts:
        found = first_non_json(item, path)
        if found is not None:
            return found
    return None


def compact_json(value: object) -> str:
    """`value` as compact JSON; ValueError for NaN or an infinity, which JSON has no text for."""
    return _COMPACT.encode(value)
