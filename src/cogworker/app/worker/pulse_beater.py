"""The pulse process itself: run as a script by a fresh interpreter (`python -I -S FILE`).

It imports the standard library only (no cogworker, no redis-py: a small
process, started at once) and speaks RESP over a socket of its own.  Its
settings arrive as one JSON line on stdin; stdin then stays open, and its
end (the worker closed it, or died) ends the pulse.  Every `interval`
seconds, while its worker (`pid`, its parent) lives and is not stopped, it
runs the pulse script (`lua/pulse.lua`) with EVAL.  Terminal and
service-manager signals are ignored: the worker decides when to stop.
"""

from __future__ import annotations

import io
import json
import os
import select
import signal
import socket
import sys
import time
from typing import Any

#: A connection: the socket's reading and writing buffers.
Stream = io.BufferedRWPair

IGNORED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP)


class ReplyError(Exception):
    """Redis answered with an error."""


def main() -> None:
    """Read the settings, then beat until stdin ends or the worker is gone."""
    for signum in IGNORED_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    settings = json.loads(sys.stdin.buffer.readline())
    worker, interval = settings["pid"], settings["interval"]
    stream: Stream | None = None
    failing = False
    while not select.select([sys.stdin], [], [], interval)[0]:
        if os.getppid() != worker:
            return
        if is_stopped(worker):
            continue
        try:
            stream = stream or connect(settings)
            command(stream, "EVAL", *settings["eval"])
        except (OSError, ValueError, ReplyError) as error:
            close(stream)
            stream = None
            if not failing:  # once per streak: the heartbeat reports Redis outages too
                say(settings, "WARNING", f"liveness pulse failed ({error!r})")
            failing = True
            continue
        if failing:
            say(settings, "INFO", "liveness pulse works again")
        failing = False


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


def connect(settings: dict[str, Any]) -> Stream:
    """A connection to Redis, authenticated and on the right database."""
    timeout = settings["timeout"]
    if settings["path"]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(settings["path"])
    else:
        sock = socket.create_connection((settings["host"], settings["port"]), timeout)
    if settings["tls"] is not None:
        sock = wrap_tls(sock, settings["tls"], settings["host"])
    stream = sock.makefile("rwb")
    if settings["password"] is not None:
        credentials = [settings["username"]] if settings["username"] else []
        command(stream, "AUTH", *credentials, settings["password"])
    if settings["db"]:
        command(stream, "SELECT", settings["db"])
    return stream


def wrap_tls(sock: socket.socket, tls: dict[str, Any], host: str) -> socket.socket:
    """`sock` under TLS, verified as the worker's own connections are."""
    import ssl

    context = ssl.create_default_context(cafile=tls["ca_certs"])
    context.check_hostname = tls["check_hostname"]
    if not tls["verify"]:
        context.verify_mode = ssl.CERT_NONE
    if tls["certfile"]:
        context.load_cert_chain(tls["certfile"], tls["keyfile"])
    return context.wrap_socket(sock, server_hostname=host)


def command(stream: Stream, *words: object) -> object:
    """Send one command; its reply."""
    encoded = [str(word).encode() for word in words]
    stream.write(b"*%d\r\n" % len(encoded))
    for word in encoded:
        stream.write(b"$%d\r\n%s\r\n" % (len(word), word))
    stream.flush()
    return reply(stream)


def reply(stream: Stream) -> object:
    """One RESP2 reply (errors raised)."""
    line = stream.readline()
    if not line.endswith(b"\r\n"):
        raise ValueError("connection closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"-":
        raise ReplyError(rest.decode(errors="replace"))
    if kind == b"$":
        size = int(rest)
        return None if size < 0 else stream.read(size + 2)[:-2]
    if kind == b"*":
        return [reply(stream) for _ in range(max(int(rest), 0))]
    return rest


def close(stream: Stream | None) -> None:
    """Drop a connection that failed (a new one is made at the next beat)."""
    if stream is not None:
        stream.close()


def say(settings: dict[str, Any], level: str, message: str) -> None:
    """Write a log line, in the worker's format, to stderr (the worker's, as it was at start)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if settings["json"]:
        line = json.dumps({"ts": stamp, "level": level, "msg": message})
    else:
        line = f"{stamp} {level} {message}"
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    main()
