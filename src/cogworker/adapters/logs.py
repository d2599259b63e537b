"""Log lines as key=value text or one JSON object per line.

Fields come from `extra=` (`logger.info("done", extra={"jid": ...})`); only
the names in FIELDS are shown, in that order.  A line logged while a job
runs (on its thread, or in its task) gets that job's jid and class
(`running_job`), so the jobs' own `logging` calls, through the root logger,
say which run they come from, as do the logger's name.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import time
from collections.abc import Iterator
from contextvars import ContextVar

LOGGER_NAME = "cogworker"
FIELDS = ("identity", "jid", "class", "queue", "duration", "error", "reason", "logger")

#: The (jid, class path) of the job the current thread or task runs, if any.
_RUNNING: ContextVar[tuple[str, str] | None] = ContextVar("cogworker_running_job", default=None)


@contextlib.contextmanager
def running_job(jid: str, class_name: str) -> Iterator[None]:
    """Within it, lines logged on this thread (or in this task and those it starts) name
    the job `jid` of `class_name`."""
    token = _RUNNING.set((jid, class_name))
    try:
        yield
    finally:
        _RUNNING.reset(token)


class JobFields(logging.Filter):
    """Gives a record the jid and class of the job running where it was logged (unless it
    names them itself), and, if it isn't cogworker's own, the name of its logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the fields; every record passes."""
        running = _RUNNING.get()
        if running is not None and "jid" not in record.__dict__:
            record.__dict__["jid"], record.__dict__["class"] = running
        if record.name != LOGGER_NAME and not record.name.startswith(f"{LOGGER_NAME}."):
            record.__dict__.setdefault("logger", record.name)
        return True


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
    """Send cogworker's log to (a private copy of) stderr at `level` in `fmt` ("text" or "json"),
    and the jobs' own (the root logger's) with it, unless the app configured that itself."""
    handler = PrivateStreamHandler(private_stderr())
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    handler.addFilter(JobFields())
    logger = logging.getLogger(LOGGER_NAME)
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False
    root = logging.getLogger()
    if not root.handlers:  # a handler there is the app's own configuration: left as it is
        root.addHandler(handler)
        root.setLevel(level)
    return logger
