"""What Redis answers, as cogworker's clients take it."""

from __future__ import annotations


def as_bytes(value: bytes | str) -> bytes:
    """A reply as bytes (cogworker's clients don't decode, but the types allow str)."""
    return value if isinstance(value, bytes) else value.encode()
