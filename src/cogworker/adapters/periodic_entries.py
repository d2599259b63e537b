"""A periodic schedule entry as the JSON the schedule hash stores (`periodic_store`)."""

from __future__ import annotations

import json
from typing import Any

import attrs

from cogworker.domain.cron import ScheduleEntry


def encode_entry(entry: ScheduleEntry) -> str:
    """An entry as the JSON stored in the schedule (sorted keys: equal entries, equal text)."""
    data = attrs.asdict(entry)
    data["class"] = data.pop("class_name")
    data["args"] = list(entry.args)
    return json.dumps(data, sort_keys=True)


def decode_entry(raw: bytes | str) -> ScheduleEntry | None:
    """A stored entry, or None if it isn't one (damaged, or from an incompatible writer)."""
    try:
        data = json.loads(raw)
        return ScheduleEntry(
            name=_typed(data, "name", str),
            cron=_typed(data, "cron", str),
            tz=_typed(data, "tz", str),
            class_name=_typed(data, "class", str),
            queue=_typed(data, "queue", str),
            retry=_typed(data, "retry", (bool, int)),
            args=tuple(_typed(data, "args", list)),
            added_at=float(_typed(data, "added_at", (int, float))),
            last_tick=_optional_number(data.get("last_tick")),
            last_run=_optional_number(data.get("last_run")),
            last_jid=_optional_text(data.get("last_jid")),
            next_run=_optional_number(data.get("next_run")),
            options=_typed(data, "options", dict) if "options" in data else {},
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _typed(data: Any, key: str, types: type | tuple[type, ...]) -> Any:
    value = data[key]
    if not isinstance(value, types):
        raise TypeError(f"{key} is {type(value).__name__}")
    return value


def _optional_text(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"not a string: {value!r}")
    return value


def _optional_number(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    return float(value)
