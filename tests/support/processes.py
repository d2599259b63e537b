"""Real `cogworker` processes for tests, and the one way tests wait for something.

Rules of this module:

* every wait is bounded and polls a condition (`wait_until`); no test sleeps
  for a fixed time hoping something happened;
* every process a test starts gets its own log file, and a failure message
  carries the tail of that log;
* every child process is killed at interpreter exit (`atexit`) and when the
  test process dies (Linux `PR_SET_PDEATHSIG`), so a crashed run leaves
  nothing behind.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self, TypeVar

T = TypeVar("T")

#: The repository root; put on the children's PYTHONPATH so `tests.*` modules import.
REPO_ROOT = Path(__file__).resolve().parents[2]

_LIVE: set[subprocess.Popen[bytes]] = set()


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    *,
    interval: float = 0.02,
    message: str | Callable[[], str] = "condition not met",
    ignore: tuple[type[Exception], ...] = (),
) -> T:
    """Call `predicate` until it returns something truthy, and return that.

    Raises AssertionError with `message` (called, if callable, only then) once
    `timeout` seconds have passed.  Exceptions of the `ignore` types count as
    "not yet" (e.g. `redis.ConnectionError` while a server restarts); the last
    one is quoted in the failure message.
    """
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while True:
        try:
            result = predicate()
        except ignore as error:
            last_error = error
        else:
            if result:
                return result
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            text = message() if callable(message) else message
            suffix = f" (last error: {last_error!r})" if last_error is not None else ""
            raise AssertionError(f"after {timeout:g}s: {text}{suffix}")
        time.sleep(min(interval, remaining))


def log_tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a log file, or a note that there is none."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGKILL it when the test process dies."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)


def spawn(
    command: Sequence[str], *, log_path: Path, cwd: Path, env: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    """Start `command` in its own session, output appended to `log_path`, reaped at exit."""
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            # Not thread-safe in general; tests start children from the main thread only.
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
    _LIVE.add(process)
    return process


def reap(process: subprocess.Popen[bytes], timeout: float = 10.0) -> int | None:
    """SIGKILL `process` and its process group unless already reaped, and wait for it."""
    if process.returncode is None:
        # Not reaped yet, so its pid (the group id: own session) cannot have been reused.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout)
    _LIVE.discard(process)
    return process.returncode


@atexit.register
def _reap_leftovers() -> None:
    for process in list(_LIVE):
        reap(process, timeout=2.0)


def cogworker_command(*args: str) -> list[str]:
    """The command line that runs `cogworker ARGS...` with this interpreter."""
    return [sys.executable, "-m", "cogworker", *args]


def work_args(
    app: str,
    *,
    redis_url: str,
    concurrency: int | None = None,
    queues: Iterable[str] = (),
    extra_args: Iterable[str] = (),
) -> list[str]:
    """The arguments of `cogworker work APP --redis-url URL [-c N] [-q NAME[,WEIGHT]]...`."""
    args = ["work", app, "--redis-url", redis_url]
    if concurrency is not None:
        args += ["-c", str(concurrency)]
    for queue in queues:
        args += ["-q", queue]
    return [*args, *extra_args]


def child_environment(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment, unbuffered, with the repo root on PYTHONPATH, plus overrides."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    paths = [str(REPO_ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.update(overrides or {})
    return env


class CogworkerProcess:
    """One `python -m cogworker ...` subprocess with its own log file in `directory`.

    Nothing happens until `start()`.  The log file is appended to, so a
    process started again keeps one log.  `cwd` defaults to `directory`, where
    a test can write the APP module (`python -m` puts the cwd on sys.path).
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        directory: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        name: str = "cogworker",
    ) -> None:
        self.command = cogworker_command(*args)
        self.directory = directory
        self.cwd = cwd if cwd is not None else directory
        self.env = child_environment(env)
        self.log_path = directory / f"{name}.log"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        """Start the process (again, if it has exited)."""
        if self.is_running:
            raise RuntimeError(f"{self.command} is already running (pid {self.pid})")
        self.directory.mkdir(parents=True, exist_ok=True)
        self._process = spawn(self.command, log_path=self.log_path, cwd=self.cwd, env=self.env)
        return self

    @property
    def process(self) -> subprocess.Popen[bytes]:
        """The running (or exited) process; an error before `start()`."""
        if self._process is None:
            raise RuntimeError("the process has not been started")
        return self._process

    @property
    def pid(self) -> int:
        """The process id."""
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status (negative: killed by that signal), or None while it runs."""
        return self.process.poll()

    @property
    def is_running(self) -> bool:
        """Whether the process was started and has not exited."""
        return self._process is not None and self._process.poll() is None

    def log_text(self) -> str:
        """Everything the process wrote to stdout and stderr so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the log, for failure messages."""
        return log_tail(self.log_path, lines)

    def send_signal(self, sig: signal.Signals | int) -> None:
        """Send `sig` to the process itself (not its children)."""
        self.process.send_signal(sig)

    def wait_for_exit(self, timeout: float = 10.0) -> int:
        """Wait for the process to exit and return its status; AssertionError on timeout."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"pid {self.pid} still running after {timeout:g}s; log tail:\n{self.log_tail()}"
            ) from None

    def terminate(self, timeout: float = 10.0) -> int:
        """SIGTERM, then wait up to `timeout`; a process that won't exit is killed and fails."""
        if self.is_running:
            self.send_signal(signal.SIGTERM)
        try:
            return self.wait_for_exit(timeout)
        except AssertionError:
            reap(self.process)
            raise

    def kill(self) -> int:
        """SIGKILL the process (a crash: no clean-up runs) and return its status."""
        if self.is_running:
            self.send_signal(signal.SIGKILL)
        return self.wait_for_exit(10.0)

    def close(self) -> None:
        """Kill whatever is left of the process and its group (test teardown)."""
        if self._process is not None:
            reap(self._process)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def start_worker(
    app: str,
    *,
    redis_url: str,
    directory: Path,
    concurrency: int | None = None,
    queues: Iterable[str] = (),
    extra_args: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    name: str = "worker",
) -> CogworkerProcess:
    """Start `cogworker work APP --redis-url URL ...` and return it (running)."""
    args = work_args(
        app, redis_url=redis_url, concurrency=concurrency, queues=queues, extra_args=extra_args
    )
    return CogworkerProcess(args, directory=directory, env=env, cwd=cwd, name=name).start()


class CogworkerFactory(Protocol):
    """The `cogworker_factory` fixture: `start_worker` with the test's directory filled in."""

    def __call__(
        self,
        app: str,
        *,
        redis_url: str,
        concurrency: int | None = None,
        queues: Iterable[str] = (),
        extra_args: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> CogworkerProcess: ...


def run_to_exit(
    directory: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 30.0
) -> tuple[int, list[str]]:
    """Run `cogworker ARGS...` to its exit: its status and its output's lines."""
    with CogworkerProcess(list(args), directory=directory, env=env) as process:
        status = process.wait_for_exit(timeout)
    return status, process.log_text().splitlines()
