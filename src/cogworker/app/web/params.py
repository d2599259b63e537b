"""Query and form parameters, checked: a bad one is a 400 naming it, never a 500.

Every parameter a route reads goes through one of these functions; each
has an allow-list or a range, and a length cap (a filter string is not a
place to send a megabyte).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Annotated, Any, TypeVar
from urllib.parse import unquote

from litestar.enums import RequestEncodingType
from litestar.exceptions import ValidationException
from litestar.params import Body

from cogworker.app.web.cursor import Cursor
from cogworker.domain.queues import LONGEST_NAME

T = TypeVar("T")

#: A route's URL-encoded form body (checked field by field with the functions below).
Form = Annotated[dict[str, Any], Body(media_type=RequestEncodingType.URL_ENCODED)]

#: The longest text a filter, jid or name parameter may be.
MAX_TEXT = 200
#: The longest jid parameter: more than any payload's jid a page lists whole.
MAX_JID = 1000
#: The longest cursor: a jid and a queue's name, each of its characters
#: percent-encoded (up to 4 bytes of UTF-8, 3 characters each).
MAX_CURSOR = 12 * (MAX_JID + LONGEST_NAME) + 64


def form_values(data: Mapping[str, object]) -> dict[str, list[str]]:
    """A parsed URL-encoded form as name -> values (a repeated field is a list there)."""
    values: dict[str, list[str]] = {}
    for name, value in data.items():
        items = value if isinstance(value, list) else [value]
        values[name] = [item if isinstance(item, str) else str(item) for item in items]
    return values


def _bad(name: str, why: str) -> ValidationException:
    return ValidationException(f"query parameter {name!r}: {why}")


def one(values: Mapping[str, Sequence[str]], name: str) -> str | None:
    """The single value of `name`, None if absent; repeated is a 400."""
    given = values.get(name, ())
    if len(given) > 1:
        raise _bad(name, "given more than once")
    return given[0] if given else None


def text(values: Mapping[str, Sequence[str]], name: str, *, limit: int = MAX_TEXT) -> str:
    """A free-text parameter ("" if absent), at most `limit` characters, no control characters."""
    value = one(values, name) or ""
    if len(value) > limit:
        raise _bad(name, f"longer than {limit} characters")
    if any(ord(char) < 32 for char in value):
        raise _bad(name, "contains control characters")
    return value.strip()


def jid(values: Mapping[str, Sequence[str]], name: str, *, limit: int = MAX_JID) -> str:
    """A jid ("" if absent), exactly as given: any jid a payload holds, control characters
    and spaces at its ends included, names its job (links percent-encode it)."""
    value = one(values, name) or ""
    if len(value) > limit:
        raise _bad(name, f"longer than {limit} characters")
    return value


def jid_ref(values: Mapping[str, Sequence[str]], name: str) -> str:
    """A jid a form's hidden field sends percent-encoded (`name_refs.jid_ref`), "" if absent."""
    try:
        # Each character of the jid as up to 12 (4 bytes of UTF-8, 3 characters each).
        return unquote(jid(values, name, limit=12 * MAX_JID), errors="strict")
    except UnicodeDecodeError:
        raise _bad(name, "not a percent-encoded jid") from None


def choice(
    values: Mapping[str, Sequence[str]], name: str, allowed: Collection[str], default: str
) -> str:
    """One of `allowed` (`default` if absent)."""
    value = one(values, name)
    if value is None:
        return default
    if value not in allowed:
        raise _bad(name, f"expected one of {', '.join(sorted(allowed))}")
    return value


def integer(
    values: Mapping[str, Sequence[str]], name: str, low: int, high: int, default: int
) -> int:
    """A decimal integer in [low, high] (`default` if absent)."""
    value = one(values, name)
    if value is None:
        return default
    if not value.isascii() or not value.isdigit() or len(value) > 12:
        raise _bad(name, "not a non-negative integer")
    number = int(value)
    if not low <= number <= high:
        raise _bad(name, f"out of range {low}..{high}")
    return number


def cursor(values: Mapping[str, Sequence[str]], name: str) -> Cursor | None:
    """A cursor (see `Cursor`), None if absent."""
    value = one(values, name)
    if value is None:
        return None
    return parse_cursor(value, name)


def parse_cursor(value: str, name: str) -> Cursor:
    """`SCORE[@TIE][/PART]~KEY` as a Cursor; a 400 naming `name` if it isn't one."""
    head, sep, key = value.partition("~")
    place, _, part = head.partition("/")
    score_text, at, tie_text = place.partition("@")
    if not sep or len(value) > MAX_CURSOR or any(ord(char) < 32 for char in value):
        raise _bad(name, "not a cursor")
    if at and not (tie_text.isascii() and tie_text.isdigit() and len(tie_text) <= 12):
        raise _bad(name, "not a cursor")
    try:
        score = float(score_text)
        queue = unquote(part, errors="strict")
        key = unquote(key, errors="strict")
    except ValueError:  # UnicodeDecodeError too
        raise _bad(name, "not a cursor") from None
    # Redis holds scores of +-inf (written as repr writes them), never NaN.
    if not math.isfinite(score) and score_text not in ("inf", "-inf"):
        raise _bad(name, "not a cursor")
    return Cursor(score=score, key=key, tie=int(tie_text) if at else None, part=queue)
