"""A module with an import side effect: it sets `imported:imports_write_a_key` in Redis."""

from __future__ import annotations

import cogworker
from tests.faults.jobs import side_effects

side_effects().set("imported:imports_write_a_key", "1")


class Anything(cogworker.Job):
    """Would run anything."""

    def perform(self) -> None:
        """Nothing here."""
