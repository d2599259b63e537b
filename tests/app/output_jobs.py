"""Jobs that log and print, for the tests of what a worker does with a job's output
(tests/app/test_job_output.py)."""

from __future__ import annotations

import logging

import cogworker
from tests.support.async_variants import register

logger = logging.getLogger(__name__)
#: How long each printed line is: longer than one write of a pipe or buffer keeps whole.
LINE_LENGTH = 5000


class Speak(cogworker.Job):
    """Logs at INFO and at WARNING through its module's logger, naming `tag`."""

    def perform(self, tag: str) -> None:
        logger.info("info from the job %s", tag)
        logger.warning("warning from the job %s", tag)


class PrintLines(cogworker.Job):
    """Prints `lines` long lines, each `P:TAG:N:` then `LINE_LENGTH` times TAG's first letter."""

    def perform(self, tag: str, lines: int) -> None:
        for number in range(lines):
            print(f"P:{tag}:{number}:" + tag[0] * LINE_LENGTH)


register(Speak)
