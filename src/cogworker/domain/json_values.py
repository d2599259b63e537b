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


#: Arguments nested deeper than this are refused: Python's json (in the
#: worker, the dashboard) and Redis's cjson give up near 1,000 levels, and
#: the code walking a value needs stack of its own.
MAX_DEPTH = 100


def is_utf8(text: str) -> bool:
    """Whether `text` can be written as UTF-8: no lone surrogate (what `os.fsdecode`
    makes of a file name's undecodable bytes), which JSON readers other than
    Python's refuse."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def is_json_native(value: object, depth: int = 0) -> bool:
    """Whether JSON carries `value` as is (see `first_non_json`, which says where it doesn't).

    The quick check every enqueued argument list goes through: no path is
    built unless something is wrong.
    """
    kind = type(value)
    if kind is float:
        return math.isfinite(value)  # type: ignore[arg-type]  # a float, checked above
    if kind is str:
        return is_utf8(value)  # type: ignore[arg-type]  # a str, checked above
    if kind in _SCALARS:
        return True
    if depth >= MAX_DEPTH:
        return False
    if kind is list:
        return all(is_json_native(item, depth + 1) for item in value)  # type: ignore[attr-defined]
    if kind is dict:
        return all(
            isinstance(key, str) and is_utf8(key) and is_json_native(item, depth + 1)
            for key, item in value.items()  # type: ignore[attr-defined]
        )
    return False


def first_non_json(value: object, path: str, depth: int = 0) -> tuple[str, str] | None:
    """The path and type of the first part of `value` that JSON can't carry as is.

    Tuples are refused too: they come back as lists, so a job would see
    something other than what it was given.  Dict keys must be strings, and
    NaN and the infinities aren't JSON (the stdlib would write them anyway).
    Strings must be valid Unicode, and nesting stays within MAX_DEPTH.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return path, f"float {value!r}"
    if isinstance(value, str) and not is_utf8(value):
        return (
            path,
            "a str with a lone surrogate (not valid Unicode: decode it, or send bytes as text)",
        )
    if type(value) in _SCALARS:
        return None  # exact types: an IntEnum or str subclass would come back as a plain one
    if type(value) in (list, dict) and depth >= MAX_DEPTH:
        return path, f"{type(value).__name__} nested more than {MAX_DEPTH} levels deep"
    if type(value) is list:
        return _first_of(((f"{path}[{index}]", item) for index, item in enumerate(value)), depth)
    if type(value) is dict:
        for key in value:
            if not isinstance(key, str):
                return f"{path} key {key!r}", type(key).__name__
            if not is_utf8(key):
                return f"{path} key {key!r}", "a str with a lone surrogate (not valid Unicode)"
        return _first_of(((f"{path}[{key!r}]", item) for key, item in value.items()), depth)
    return path, type(value).__name__


def _first_of(parts: Iterable[tuple[str, object]], depth: int) -> tuple[str, str] | None:
    for path, item in parts:
        found = first_non_json(item, path, depth + 1)
        if found is not None:
            return found
    return None


def compact_json(value: object) -> str:
    """`value` as compact JSON; ValueError for NaN or an infinity, which JSON has no text for."""
    return _COMPACT.encode(value)
