"""Log lines as key=value text or one JSON object per line.

Fields come from `extra=` (`logger.info("done", extra={"jid": ...})`); only
the names in FIELDS are shown, in that order.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import os
import time

LOGGER_NAME = "cogworker"
FIELDS = ("identity", "jid", "class", "queue", "duration", "error", "reason")


def _fields(record: logging.LogRecord) -> dict[str, object]:
    return {name: record.__dict__[name] for name in FIELDS if name in record.__dict__}


@functools.lru_cache(maxsize=4)
def _second(second: int) -> str:
    """A second's text, formatted once: in a retry storm every failure logs a line."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))


def _timestamp(record: logging.LogRecord) -> str:
    return f"{_second(int(record.created))}.{int(record.msecs):03d}Z"


class KeyValueFormatter(logging.Formatter):
    """`2026-12-03T10:00:00.123Z INFO done jid=… class=… duration=0.002`."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of text (plus its traceback, if any)."""
        parts = [_timestamp(record), record.levelname, record.getMessage()]
        parts += [f"{name}={_quoted(value)}" for name, value in _fields(record).items()]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, msg and the fields."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one JSON line."""
        obj: dict[str, object] = {"ts": _timestamp(record), "level": record.levelname}
        obj["msg"] = record.getMessage()
        obj.update(_fields(record))
        if record.exc_info:
            obj["traceback"] = self.formatException(record.exc_info)
        return json.dumps(obj, default=str)


def _quoted(value: object) -> str:
    text = str(value)
    return json.dumps(text) if (not text or any(c in text for c in ' "=\n')) else text


class PrivateStreamHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to its own stream; a record it can't write is dropped, never raised.

    The stdlib's `handleError` reports on `sys.stderr`, and raises when a job
    has closed it: the thread that logged (a fetcher, a heartbeat) would die.
    """

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (stdlib's name)
        """Drop the record: there is nowhere sure to say so."""


def private_stderr() -> io.TextIOWrapper:
    """A stream on a duplicate of fd 2, made now: the log goes where stderr went at start,
    whatever a job later does to `sys.stderr` or to fd 2 (a closed fd 2 is soon reused,
    by a Redis socket for one)."""
    fd = os.dup(2)  # not inherited by subprocesses (PEP 446)
    return open(fd, "w", buffering=1, encoding="utf-8", errors="backslashreplace")


def setup(level: str, fmt: str) -> logging.Logger:
    """Send cogworker's log to (a private copy of) stderr at `level` in `fmt` ("text" or "json")."""
    handler = PrivateStreamHandler(private_stderr())
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    logger = logging.getLogger(LOGGER_NAME)
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False
    return logger
