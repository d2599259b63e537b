"""The pulse process itself: run as a script by a fresh interpreter (`python -I -S FILE`).

It imports no cogworker and no redis-py, and of the standard library only
what the interpreter has loaded at start-up plus `os`, `select` and
`_socket` (a small process, started at once): `socket`, `signal`, `json`
and `typing` would bring `enum` and `re` with them, about 1 MiB of this
process's own 3.5 (issue #19).  It speaks RESP over a socket of its own
(`pulse_wire`, loaded from this file's directory).
Its settings arrive on stdin as one `marshal`led dict after a line giving
its size (the worker runs the same interpreter, so the format matches);
stdin then stays open, and its end (the worker closed it, or died) ends
the pulse.
Every `interval` seconds, while its worker (`pid`, its parent) lives and
is not stopped, it runs the pulse script (`lua/pulse.lua`) with EVAL.  On a
Redis Cluster it starts at the first start-up node that answers (each tried
once in turn per beat, from the one in use: a beat none answers fails, and
the next beat tries again); a MOVED reply (the script did not run) sends it
to the node that reply names, which it keeps using.
Its worker tells it, on stdin too, the hard deadline of each run with a
time limit, and when that run's outcome is claimed (`pulse.RunWatch`): a
run still told `frozen_after` seconds past its deadline means the worker
is frozen (its watchdog thread couldn't act), and the pulse kills it and
marks that run as timed out for its recovery.
Terminal and service-manager signals are ignored: the worker decides when
to stop.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # loaded at start-up; `signal` would add enum
import marshal
import os
import select
import sys
import time

TYPE_CHECKING = False  # what mypy reads as typing's (typing would load re and enum)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    from cogworker.app.worker.pulse_wire import ReplyError, Stream, close, send

    #: A run watched: its hard deadline (monotonic), its mark's key and text.
    Watched: TypeAlias = tuple[float, str, str]
else:  # run without cogworker on its path: its sibling file, from its own directory
    sys.path.insert(0, __file__.rpartition("/")[0])
    from pulse_wire import ReplyError, close, send

IGNORED_SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGTSTP)


def read_settings() -> tuple[dict[str, Any], bytes]:
    """The settings the worker wrote (a line with the size, then the marshalled dict), and
    what came after them.  Read from the descriptor, unbuffered: `select` must see all the
    rest."""
    data = b""
    while b"\n" not in data:
        data += read_some()
    size, _, data = data.partition(b"\n")
    while len(data) < int(size):
        data += read_some()
    settings: dict[str, Any] = marshal.loads(data[: int(size)])
    return settings, data[int(size) :]


def read_some() -> bytes:
    """What stdin holds now (waiting for some); EOFError at its end."""
    data = os.read(0, 65536)
    if not data:
        raise EOFError("the worker closed the pulse's stdin")
    return data


def main() -> None:
    """Read the settings, then beat until stdin ends or the worker is gone."""
    for signum in IGNORED_SIGNALS:
        _signal.signal(signum, _signal.SIG_IGN)
    try:
        settings, told = read_settings()
        watch(settings, told)
    except EOFError:
        return


def watch(settings: dict[str, Any], told: bytes) -> None:
    """Beat every `interval` and watch the runs told (until stdin ends: EOFError), while
    the worker lives; end it if it is frozen past a run's hard deadline."""
    worker, interval = settings["pid"], settings["interval"]
    watched: dict[str, Watched] = {}
    told = take_lines(told, watched)
    beater = Beater(settings)
    next_beat = time.monotonic() + interval
    stopped_until = 0.0  # a stopped worker is looked at again an interval later, no sooner
    while True:
        frozen_at = (run[0] + settings["frozen_after"] for run in watched.values())
        wake = max(min([next_beat, *frozen_at]), stopped_until)
        if select.select([0], [], [], max(0.0, wake - time.monotonic()))[0]:
            told = take_lines(told + read_some(), watched)
        now = time.monotonic()
        if os.getppid() != worker:
            return
        if is_stopped(worker):
            next_beat = stopped_until = now + interval
            # Not frozen by a job: once resumed, its watchdog gets its time to act.
            watched = {jid: (max(run[0], now), *run[1:]) for jid, run in watched.items()}
            continue
        frozen = [run for run in watched.values() if run[0] + settings["frozen_after"] <= now]
        if frozen and select.select([0], [], [], 0)[0]:
            told = take_lines(told + read_some(), watched)  # a claim told just now: look again
            continue
        if frozen:
            end_frozen(settings, beater, frozen)
            return
        if now >= next_beat:
            next_beat = now + interval
            beater.beat()


def take_lines(told: bytes, watched: dict[str, Watched]) -> bytes:
    """Apply the whole lines of `told` to `watched`; what is left of a line cut short.

    "+ JID SECONDS MARK KEY": the run of JID reaches its hard deadline in SECONDS (then
    KEY is set to MARK); "- JID": its outcome is claimed."""
    *lines, rest = told.split(b"\n")
    for line in lines:
        words = line.decode().split(" ", 4)
        if words[0] == "+":
            watched[words[1]] = (time.monotonic() + float(words[2]), words[4], words[3])
        else:
            watched.pop(words[1], None)
    return rest


class Beater:
    """The pulse's connection, and whether its beats fail (said once per streak)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.stream: Stream | None = None
        self.failing = False

    def beat(self) -> None:
        """Run the pulse script once."""
        self.send("EVAL", *self.settings["eval"])

    def send(self, *words: object) -> bool:
        """Send one command (following redirects); whether it was answered."""
        try:
            self.stream = send(self.stream, self.settings, words)
        except (OSError, ValueError, ReplyError) as error:
            close(self.stream)
            self.stream = None
            if not self.failing:  # once per streak: the heartbeat reports Redis outages too
                say(self.settings, "WARNING", f"liveness pulse failed ({error!r})")
            self.failing = True
            return False
        if self.failing:
            say(self.settings, "INFO", "liveness pulse works again")
        self.failing = False
        return True


def end_frozen(settings: dict[str, Any], beater: Beater, frozen: list[Watched]) -> None:
    """The worker is frozen past the hard deadline of the `frozen` runs (the watchdog, one
    of its threads, couldn't claim them): kill it, then mark those runs as timed out for
    their recovery (after the kill: the worker can't settle them any more)."""
    os.kill(settings["pid"], _signal.SIGKILL)
    for _, key, mark in frozen:
        beater.send("SET", key, mark, "EX", settings["mark_ttl"])
    names = ", ".join(key.rpartition(":")[2] for _, key, _ in frozen)
    say(
        settings,
        "ERROR",
        f"worker {settings['pid']} frozen past the hard time limit of job {names} (C code "
        "holding the GIL?): killed; that run is filed as timed out, its other jobs are "
        "recovered as orphans",
    )


def is_stopped(pid: int) -> bool:
    """Whether `pid` is stopped (SIGSTOP, or at a tracer's stop); False where /proc can't say."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            stat = file.read()
    except OSError:
        return False
    # "pid (comm) state ...": comm may hold spaces and parentheses.
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] in ("T", "t")


def say(settings: dict[str, Any], level: str, message: str) -> None:
    """Write a log line, in the worker's format, to stderr (the worker's, as it was at start)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if settings["json"]:
        import json  # only for a warning: json brings re and enum

        line = json.dumps({"ts": stamp, "level": level, "msg": message})
    else:
        line = f"{stamp} {level} {message}"
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    main()
