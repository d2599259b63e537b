"""A job module that calls sys.exit() when imported (a script left as a job module)."""

from __future__ import annotations

import sys

import cogworker


class Never(cogworker.Job):
    """Never defined: the module exits first."""

    def perform(self) -> None:
        """Not reached."""


sys.exit("this module exits at import")
