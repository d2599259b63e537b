"""A log line's timestamp: UTC to the millisecond, right across seconds (each second's
text is formatted once and reused)."""

from __future__ import annotations

import logging

from cogworker.adapters.logs import JsonFormatter, KeyValueFormatter


def _at(created: float) -> logging.LogRecord:
    record = logging.LogRecord("cogworker", logging.WARNING, __file__, 1, "fail", None, None)
    record.created, record.msecs = created, (created - int(created)) * 1000
    return record


def test_lines_carry_the_utc_time_of_their_record() -> None:
    """Records within one second and in the next each show their own time (binary
    fractions: the milliseconds are truncated, as the stdlib does)."""
    text = KeyValueFormatter()
    times = [1_800_000_000.125, 1_800_000_000.875, 1_800_000_001.0625, 1_800_000_000.5]
    assert [text.format(_at(t)).split(" ")[0] for t in times] == [
        "2027-01-15T08:00:00.125Z",
        "2027-01-15T08:00:00.875Z",
        "2027-01-15T08:00:01.062Z",
        "2027-01-15T08:00:00.500Z",
    ]
    assert JsonFormatter().format(_at(times[2])).startswith('{"ts": "2027-01-15T08:00:01.062Z"')
