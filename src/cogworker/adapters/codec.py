"""The one cattrs converter: records read back from Redis on the cold paths (the attempts log,
the run history) and the dashboard's JSON.

Job payloads are not here: they are encoded and decoded by hand
(`domain.payload`), on the hot path.  Structuring is strict: a field of the
wrong JSON type is refused rather than coerced (cattrs would make `42` the
string `"42"`), and reading never raises: a record that doesn't structure
comes back as None, for the caller to skip or flag.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import cattrs

T = TypeVar("T")

#: Unstructured, a field at its default is left out (a queue's `problem` only when it has one).
CONVERTER = cattrs.Converter(omit_if_default=True)
#: Unstructured, every field is in, at its default too: an API's records all have the same keys.
_IN_FULL = cattrs.Converter()


def _exactly(kind: type) -> Any:
    def structure(value: object, _: type) -> object:
        # bool is an int to isinstance, but a JSON `true` is no count or text.
        if isinstance(value, bool) and kind is not bool:
            raise TypeError(f"expected {kind.__name__}, got a boolean")
        if not isinstance(value, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return structure


def _number(value: object, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


for _kind in (str, int, bool):
    CONVERTER.register_structure_hook(_kind, _exactly(_kind))
CONVERTER.register_structure_hook(float, _number)


def structured(raw: bytes | str, kind: type[T]) -> T | None:
    """The record of type `kind` that JSON text `raw` holds, or None if it holds none."""
    try:
        return CONVERTER.structure(json.loads(raw), kind)
    except (ValueError, TypeError, RecursionError, cattrs.BaseValidationError):
        return None


def unstructured(value: object) -> Any:
    """A record as plain JSON-ready values."""
    return CONVERTER.unstructure(value)


def unstructured_in_full(value: object) -> Any:
    """A record as plain JSON-ready values, every field in (None, 0, False and [] too), so a
    reader of an API finds the same keys on every record."""
    return _IN_FULL.unstructure(value)
