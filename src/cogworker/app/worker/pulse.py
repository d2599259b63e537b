"""The pulse: a companion process that keeps a worker's beat fresh while the worker lives.

A job in C code (a big regex, `sum(range(...))`, json on a huge document)
can hold the GIL past `orphan_threshold`; the heartbeat thread can't run
then, and another process would judge this one gone and run its jobs again.
The pulse has a GIL of its own: a fresh interpreter running
`pulse_beater.py`, which imports a few standard modules only (a fork of the
worker would share its pages at first, but keep copies of every page the
worker writes afterwards).  While the worker is alive and not stopped (a
frozen, SIGSTOPped worker must still be judged gone), it looks every half
`heartbeat_interval` and stamps the worker's beat if the heartbeat is late
(see `lua/pulse.lua`): while the heartbeat is on time the beats are all
its own.  It ends when the worker closes the pulse's stdin (a clean stop)
or dies.
"""

from __future__ import annotations

import logging
import marshal
import os
import subprocess
import sys
from pathlib import Path

import attrs

from cogworker.adapters.liveness import connection_settings, presence_ttl, pulse_eval
from cogworker.adapters.redis_client import SOCKET_TIMEOUT
from cogworker.adapters.redis_target import RedisTarget
from cogworker.app.config import Config

BEATER = Path(__file__).with_name("pulse_beater.py")


@attrs.define
class Pulse:
    """The running companion of this process, seen from the worker."""

    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        """End the pulse (its stdin closes; it ends once a beat in flight is done) and reap it."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(SOCKET_TIMEOUT + 1.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start(
    config: Config, target: RedisTarget, identity: str, logger: logging.Logger
) -> Pulse | None:
    """Start the pulse for this process (`identity`) on `target`; None, said in the log,
    if it can't be."""
    message = settings_message(config, target, identity)
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(BEATER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
    except OSError as error:
        _not_started(logger, error)
        return None
    try:
        assert process.stdin is not None
        process.stdin.write(message)
        process.stdin.flush()
    except OSError as error:  # it died at once: reap it
        process.wait()
        _not_started(logger, error)
        return None
    return Pulse(process)


def settings_message(config: Config, target: RedisTarget, identity: str) -> bytes:
    """What the beater reads on its stdin: a line with the size, then its settings
    marshalled (it reads no json: that would load re and enum there)."""
    settings = connection_settings(target)
    settings |= {
        "pid": os.getpid(),
        "interval": config.heartbeat_interval / 2,
        "json": config.log_format == "json",
        "eval": pulse_eval(
            identity,
            ttl=presence_ttl(config.orphan_threshold),
            stale_after=late_after(config),
        ),
    }
    encoded = marshal.dumps(settings)
    return b"%d\n" % len(encoded) + encoded


def late_after(config: Config) -> float:
    """How old a beat is when the heartbeat counts as late: half an interval past due,
    and never more than half-way to the orphan threshold."""
    halfway = (config.heartbeat_interval + config.orphan_threshold) / 2
    return min(1.5 * config.heartbeat_interval, halfway)


def _not_started(logger: logging.Logger, error: OSError) -> None:
    logger.error(
        "no liveness pulse (%s): a job holding the GIL past orphan_threshold could make "
        "this process look gone",
        error,
    )
