"""How the dashboard and the CLI show a length of time (`format.span`)."""

from __future__ import annotations

import pytest

from cogworker.app.web.format import span


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.04, "0.0 s"), (0.94, "0.9 s"), (0.96, "1 s"), (0.999, "1 s"), (1.4, "1 s"), (42, "42 s")],
)
def test_a_span_under_a_minute_shows_tenths_only_below_a_second(seconds: float, shown: str) -> None:
    """Tenths below a second, whole seconds from there: a latency of 0.96 s is `1 s`, never
    `1.0 s` (a format the docs' output checks, and a reader, take for another)."""
    assert span(seconds) == shown
