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
    """A connection to Redis (behind Sentinel: to the primary now), authenticated and on
    the right database."""
    if settings["path"]:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(settings["timeout"])
        sock.connect(settings["path"])
        stream = sock.makefile("rwb")
    else:
        where = settings["host"], settings["port"]
        if settings["sentinels"] is not None:
            where = primary(settings)
        stream = open_tcp(settings, where)
    authenticate(stream, settings["username"], settings["password"])
    if settings["db"]:
        command(stream, "SELECT", settings["db"])
    return stream


def open_tcp(settings: dict[str, Any], where: tuple[str, int]) -> Stream:
    """A TCP connection to `where`, under TLS if the settings say so."""
    sock = socket.create_connection(where, settings["timeout"])
    if settings["tls"] is not None:
        sock = wrap_tls(sock, settings["tls"], where[0])
    return sock.makefile("rwb")


def authenticate(stream: Stream, username: str | None, password: str | None) -> None:
    """AUTH as the ACL user (or the default user) when there is a password."""
    if password is not None:
        command(stream, "AUTH", *([username] if username else []), password)


def primary(settings: dict[str, Any]) -> tuple[str, int]:
    """The primary's address, from the first sentinel that names one (as redis-py asks)."""
    sentinels = settings["sentinels"]
    problems: list[str] = []
    for host, port in sentinels["addresses"]:
        try:
            stream = open_tcp(settings, (host, port))
        except OSError as error:
            problems.append(f"{host}:{port} {error!r}")
            continue
        try:
            authenticate(stream, sentinels["username"], sentinels["password"])
            answer = command(stream, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sentinels["master"])
        except (OSError, ValueError, ReplyError) as error:
            problems.append(f"{host}:{port} {error!r}")
            continue
        finally:
            close(stream)
        if isinstance(answer, list) and len(answer) == 2:
            return answer[0].decode(), int(answer[1])
        problems.append(f"{host}:{port} knows no master {sentinels['master']!r}")
    raise ValueError(f"no sentinel names the primary: {'; '.join(problems)}")


def wrap_tls(sock: socket.socket, tls: dict[str, Any], host: str) -> socket.socket:
    """`sock` under TLS, verified as the worker's own connections are."""
    import ssl

    context = ssl.create_default_context(cafile=tls["ca_file"])
    context.check_hostname = tls["verify"] == "full"
    if tls["verify"] == "none":
        context.verify_mode = ssl.CERT_NONE
    if tls["cert_file"]:
        context.load_cert_chain(tls["cert_file"], tls["key_file"])
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
