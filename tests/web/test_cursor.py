"""A set page's cursor names the queue whose set holds its entry (layout step 8): written
and read back, whatever the queue's name holds; a cursor written before names none."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar.exceptions import ValidationException

from cogworker.app.web.cursor import Cursor
from cogworker.app.web.params import parse_cursor

scores = st.floats(allow_nan=False)
#: What a name read from Redis can hold: decoded with "backslashreplace" (`adapters.parts`),
#: it never holds a lone surrogate, which no URL can carry.
readable = st.characters(min_codepoint=32, blacklist_categories=("Cs",))
parts = st.text(readable, max_size=30)
keys = st.text(readable, min_size=1, max_size=30)


@given(score=scores, key=keys, tie=st.none() | st.integers(0, 10**9), part=parts)
def test_a_cursor_reads_back_as_written(score: float, key: str, tie: int | None, part: str) -> None:
    """Its score, tie, queue (`~`, `/`, `%` and all) and key come back as they were."""
    cursor = Cursor(score=score, key=key, tie=tie, part=part)
    assert parse_cursor(str(cursor), "after") == cursor


def test_a_cursor_of_before_names_the_empty_queue_name() -> None:
    """`SCORE@TIE~KEY`, as a link made before the sets went per queue says it."""
    assert parse_cursor("1.5@3~j/1", "at") == Cursor(score=1.5, key="j/1", tie=3, part="")


@pytest.mark.parametrize("value", ["1.0/%ff~j", "x/q~j", "1.0@x/q~j"])
def test_a_cursor_that_can_t_be_read_is_a_bad_request(value: str) -> None:
    with pytest.raises(ValidationException):
        parse_cursor(value, "after")
