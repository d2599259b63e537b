"""The pulse's own Redis client (see `pulse_beater`): RESP over a socket, with AUTH,
SELECT, TLS, Sentinel and a cluster's redirects, loading only what the beater may.

Loaded by the beater from its own directory (it runs without cogworker on its path).
"""

from __future__ import annotations

import _socket
import io

TYPE_CHECKING = False  # what mypy reads as typing's (typing would load re and enum)
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    #: A connection: the socket's reading and writing buffers.
    Stream: TypeAlias = "io.BufferedRWPair[SocketIO, SocketIO]"

#: Redirects a command follows before it gives up (a slot being moved twice in a row).
MAX_REDIRECTS = 3


class ReplyError(Exception):
    """Redis answered with an error."""


class SocketIO(io.RawIOBase):
    """A connected socket as a raw stream (as `socket.makefile` makes, without `socket`)."""

    def __init__(self, sock: Any) -> None:
        super().__init__()
        self.sock = sock

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        received: int = self.sock.recv_into(buffer)
        return received

    def write(self, data: Any) -> int:
        self.sock.sendall(data)
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self.sock.close()
        super().close()


def send(stream: Stream | None, settings: dict[str, Any], words: tuple[object, ...]) -> Stream:
    """Send one command, on `stream` or a new connection; the connection used.

    A MOVED reply means the command did not run and its slot lives on the node it
    names: the settings point there (for this and later commands) and it is sent again."""
    for _redirect in range(MAX_REDIRECTS):
        stream = stream or connect(settings)
        try:
            command(stream, *words)
        except ReplyError as error:
            words_of = str(error).split()
            if words_of[:1] != ["MOVED"] or len(words_of) != 3:
                raise
            close(stream)
            stream = None
            host, _, port = words_of[2].rpartition(":")
            settings["host"], settings["port"] = host or settings["host"], int(port)
            continue
        return stream
    raise ReplyError(f"still MOVED after {MAX_REDIRECTS} redirects")


def connect(settings: dict[str, Any]) -> Stream:
    """A connection to Redis (behind Sentinel: to the primary now), authenticated and on
    the right database."""
    if settings["path"]:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        sock.settimeout(settings["timeout"])
        try:
            sock.connect(settings["path"])
        except OSError:
            sock.close()
            raise
        stream = buffered(sock)
    elif settings["sentinels"] is not None:
        stream = open_tcp(settings, primary(settings))
    else:
        stream = open_answering(settings)
    authenticate(stream, settings["username"], settings["password"])
    if settings["db"]:
        command(stream, "SELECT", settings["db"])
    return stream


def open_answering(settings: dict[str, Any]) -> Stream:
    """A TCP connection to the node the settings point at or, on a cluster, when it doesn't
    answer, to the first of the other start-up nodes that does: the settings then point
    there.  Each is tried once; the error of the last, if none answers."""
    where = settings["host"], settings["port"]
    others = [(host, port) for host, port in settings["nodes"] if (host, port) != where]
    problems: list[str] = []
    for host, port in [where, *others]:
        try:
            stream = open_tcp(settings, (host, port))
        except OSError as error:
            problems.append(f"{host}:{port} {error!r}")
            failure = error
            continue
        settings["host"], settings["port"] = host, port
        return stream
    if not others:
        raise failure
    raise OSError(f"no node of the cluster answers: {'; '.join(problems)}")


def open_tcp(settings: dict[str, Any], where: tuple[str, int]) -> Stream:
    """A TCP connection to `where`, under TLS if the settings say so."""
    sock: Any = tcp_socket(where, settings["timeout"])
    if settings["tls"] is not None:
        sock = wrap_tls(sock, settings["tls"], where[0])
    return buffered(sock)


def buffered(sock: Any) -> Stream:
    """`sock`'s reading and writing buffers (one raw stream under both, as `makefile`)."""
    raw = SocketIO(sock)
    return io.BufferedRWPair(raw, raw)


def tcp_socket(where: tuple[str, int], timeout: float) -> _socket.socket:
    """A socket connected to the first of `where`'s addresses that answers (as
    `socket.create_connection` tries them)."""
    host, port = where
    # A str host is encoded with the idna codec, which loads re, stringprep and
    # unicodedata (1.2 MiB, a third of this process's own memory); an ASCII name
    # needs no codec.
    name = host.encode() if host.isascii() else host
    problem: OSError = OSError(f"no address for {host}")
    for family, kind, proto, _, address in _socket.getaddrinfo(name, port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
        except OSError as error:
            sock.close()
            problem = error
            continue
        return sock
    raise problem


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


def wrap_tls(sock: _socket.socket, tls: dict[str, Any], host: str) -> Any:
    """`sock` under TLS, verified as the worker's own connections are (`ssl` and `socket`
    loaded only then)."""
    import socket
    import ssl

    context = ssl.create_default_context(cafile=tls["ca_file"])
    context.check_hostname = tls["verify"] == "full"
    if tls["verify"] == "none":
        context.verify_mode = ssl.CERT_NONE
    if tls["cert_file"]:
        context.load_cert_chain(tls["cert_file"], tls["key_file"])
    timeout = sock.gettimeout()
    plain = socket.socket(fileno=sock.detach())
    plain.settimeout(timeout)  # a socket made from a descriptor starts without it
    return context.wrap_socket(plain, server_hostname=host)


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
