"""Log lines as key=value text or one JSON object per line.

Fields come from `extra=` (`logger.info("done", extra={"jid": ...})`); only
the names in FIELDS are shown, in that order.
"""

from __future__ import annotations

import json
import logging
import sys
import time

LOGGER_NAME = "cogworker"
FIELDS = ("identity", "jid", "class", "queue", "duration", "error", "reason")


def _fields(record: logging.LogRecord) -> dict[str, object]:
    return {name: record.__dict__[name] for name in FIELDS if name in record.__dict__}


def _timestamp(record: logging.LogRecord) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{seconds}.{int(record.msecs):03d}Z"


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


def setup(level: str, fmt: str) -> logging.Logger:
    """Send cogworker's log to stderr at `level` in `fmt` ("text" or "json")."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    logger = logging.getLogger(LOGGER_NAME)
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False
    return logger
