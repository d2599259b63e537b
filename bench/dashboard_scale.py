"""The dashboard at scale: each page's server time and the longest Redis command it causes.

    .venv/bin/python -m bench.dashboard_scale [--size 100000] [--rounds 3]

Starts a private redis-server, loads SIZE dead jobs, SIZE retries and SIZE
jobs queued on `default` (generated inside Redis by a loader script, 10,000
per call: no payloads cross the network), then requests every page and API
of the dashboard in-process (Litestar's test client) and reads the SLOWLOG
around each request: with `slowlog-log-slower-than 0` every command is
logged with its own execution time, so the longest one is what the request
made Redis spend in one go, whatever the client's or the machine's load
adds around it. Prints the Markdown table of docs/dashboard.md.
`tests/web/test_scale.py` runs the same measurement and fails when a
request causes a Redis command over `LIMIT_MS`.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
import httpx
import redis
from litestar.testing import TestClient

import cogworker
from bench.tracking_memory import start_redis
from cogworker.adapters import redis_keys as keys
from cogworker.app.web import create_app

SIZE = 100_000
#: No dashboard request may make Redis run one command longer than this.
LIMIT_MS = 5.0
#: Runs more of a request whose longest command took over `LIMIT_MS`, at most.
RERUNS = 3
#: Entries the loader makes per call.
LOAD_BATCH = 10_000
#: Scores start here: a second apart, in the past (dead) or the future (retries).
DEAD_FROM, RETRY_FROM = 1.7e9, 4.0e9

# KEYS[1] the sorted set or list, KEYS[2] a sorted set's queue's jid index of the sets
# (noted as the engine's scripts note each entry: lua/_located.lua); ARGV: "zset" or
# "list", the first number, how many, the jid prefix, the first score, the set's name.
LOADER = """
local zset, first, count = ARGV[1] == "zset", tonumber(ARGV[2]), tonumber(ARGV[3])
local filler = string.rep("x", 40)
for n = first, first + count - 1 do
  local failure = zset and (',"error_class":"RuntimeError","error_message":"boom ' .. n
    .. '","failed_at":1.7e9,"retry_count":3') or ''
  local jid = ARGV[4] .. string.format("%06d", n)
  local entry = '{"class":"app.jobs.Class' .. (n % 7) .. '","queue":"default","jid":"'
    .. jid .. '","args":[' .. n .. ',"' .. filler
    .. '"],"retry":true,"created_at":1.7e9,"enqueued_at":1.7e9' .. failure .. '}'
  if zset then
    local score = tonumber(ARGV[5]) + n
    redis.call("ZADD", KEYS[1], score, entry)
    redis.call("HSET", KEYS[2], jid, ARGV[6] .. " " .. string.format("%.17g", score))
  else
    redis.call("LPUSH", KEYS[1], entry)
  end
end
return count
"""


#: A command as the SLOWLOG names it (its arguments, space-separated), and which of the
#: request's commands with those arguments it was.
Command = tuple[bytes, int]


@attrs.frozen(kw_only=True)
class Measured:
    """One request: its page, server time, and the longest Redis command it caused."""

    page: str
    path: str
    status: int
    server_ms: float
    longest_ms: float
    #: The longest command's name ("" if the request sent none).
    longest: str
    commands: int
    text: str = attrs.field(repr=False)
    #: Each command's time in µs (see `steadiest`).
    durations: dict[Command, int] = attrs.field(repr=False, factory=dict)


def load(client: redis.Redis, size: int) -> float:
    """`size` dead jobs (`dead000000`...), retries (`retry...`) and jobs queued on
    `default` (`queued...`, the first pushed runs next); the seconds it took."""
    started = time.perf_counter()
    client.sadd(keys.QUEUES, "default")
    client.sadd(keys.PARTS, "default")  # as the settlements filing the sets' entries did
    places = (
        (keys.dead("default"), "zset", "dead", DEAD_FROM),
        (keys.retry("default"), "zset", "retry", RETRY_FROM),
        (keys.queue("default"), "list", "queued", 0.0),
    )
    located = keys.located("default")
    for key, kind, prefix, score in places:
        name = key.rpartition(":")[2]
        for first in range(0, size, LOAD_BATCH):
            count = min(LOAD_BATCH, size - first)
            client.eval(LOADER, 2, key, located, kind, first, count, prefix, repr(score), name)
    return time.perf_counter() - started


def measure(http: TestClient[object], client: redis.Redis, page: str, path: str) -> Measured:
    """Request `path` (redirects followed) and read what Redis logged meanwhile; when a
    command took over `LIMIT_MS`, request it up to `RERUNS` more times and keep each
    command's shortest time (see `steadiest`)."""
    runs = [_run(http, client, path)]
    durations = runs[0][2]
    while max(durations.values(), default=0) > LIMIT_MS * 1000 and len(runs) <= RERUNS:
        runs.append(_run(http, client, path))
        durations = steadiest([logged for _, _, logged in runs])
    response, seconds = runs[0][0], min(seconds for _, seconds, _ in runs)
    return _measured(page, path, response.status_code, response.text, seconds, durations)


def _measured(
    page: str, path: str, status: int, text: str, seconds: float, durations: dict[Command, int]
) -> Measured:
    longest = max(durations, key=durations.__getitem__, default=None)
    return Measured(
        page=page,
        path=path,
        status=status,
        server_ms=seconds * 1000,
        longest_ms=durations[longest] / 1000 if longest else 0.0,
        longest=longest[0].split()[0].decode().upper() if longest else "",
        commands=len(durations),
        text=text,
        durations=durations,
    )


def steadiest(runs: Sequence[dict[Command, int]]) -> dict[Command, int]:
    """Each command's shortest time (µs) over the runs of one request.

    A command's time in the SLOWLOG is its own execution, but on a loaded
    machine the server can be descheduled in the middle of one: a spike that
    doesn't come back at the same command in another run. A command that is
    slow because of what it does is slow every time.
    """
    steadiest = dict(runs[0])
    for run in runs[1:]:
        for command, took in run.items():
            steadiest[command] = min(steadiest.get(command, took), took)
    return steadiest


def _run(
    http: TestClient[object], client: redis.Redis, path: str
) -> tuple[httpx.Response, float, dict[Command, int]]:
    """One request: its response, its seconds, and each command's time (µs) it caused."""
    client.slowlog_reset()
    started = time.perf_counter()
    response = http.get(path, follow_redirects=True)
    elapsed = time.perf_counter() - started
    logged: dict[Command, int] = {}
    seen: dict[bytes, int] = {}
    # The SLOWLOG lists the newest first.
    for entry in reversed(client.slowlog_get(-1)):
        command = entry["command"]
        if command.upper().startswith((b"SLOWLOG", b"CONFIG")):
            continue
        seen[command] = seen.get(command, -1) + 1
        logged[command, seen[command]] = int(entry["duration"])
    return response, elapsed, logged


def log_every_command(client: redis.Redis) -> None:
    """Make the SLOWLOG hold every command of a request, with its own duration."""
    client.config_set("slowlog-log-slower-than", 0)
    client.config_set("slowlog-max-len", 100_000)


def first_link(html: str, place: str) -> str:
    """The first job link of a page listing jobs in `place` (a set's slug, or `queue`)."""
    found = re.search(rf'href="(/job\?[^"]*in={place}[^"]*)"', html)
    if found is None:
        raise AssertionError(f"no job link with in={place} on the page")
    return found.group(1).replace("&amp;", "&")


def pages(http: TestClient[object], client: redis.Redis) -> list[Measured]:
    """Every page and API over the loaded data, each measured once."""
    done: list[Measured] = []

    def run(page: str, path: str) -> Measured:
        done.append(measure(http, client, page, path))
        return done[-1]

    for page, path in STATIC_PAGES:
        run(page, path)
    dead = next(row for row in done if row.page == "Dead")
    run("Job page via a Dead link", first_link(dead.text, "dead"))
    retries = next(row for row in done if row.page == "Retries")
    run("Job page via a Retries link", first_link(retries.text, "retries"))
    queue = next(row for row in done if row.page == "Queue page")
    run("Job page via a queue link", first_link(queue.text, "queue"))
    size = client.zcard(keys.dead("default"))
    run("Go to jid (dead, halfway)", f"/job?jid=dead{size // 2:06d}")
    run("Go to jid (retry, halfway)", f"/job?jid=retry{size // 2:06d}")
    run("Go to jid (nowhere)", "/job?jid=nosuchjid")
    return done


#: The pages without a jid: (name, path).
STATIC_PAGES = (
    ("Overview", "/"),
    ("Workers (processes, running)", "/workers"),
    ("Queues", "/queues"),
    ("Queue page", "/queue?name=default"),
    ("Queue page 400", "/queue?name=default&page=400"),
    ("Retries", "/retries"),
    ("Scheduled", "/scheduled"),
    ("Dead", "/dead"),
    ("Dead, by cursor", f"/dead?after={DEAD_FROM + 50_000!r}/default~dead050000"),
    ("Dead, filtered", "/dead?error=boom%209999"),
    ("Dead, bulk confirmation", "/dead/bulk?action=delete&class=Class3"),
    ("Periodic", "/periodic"),
    ("Metrics", "/job-metrics"),
    ("About", "/about"),
    ("/api/stats", "/api/stats"),
    ("/metrics", "/metrics"),
)


def table(rows: Sequence[Measured]) -> str:
    """The Markdown table: page | server ms | longest Redis call ms (and which command)."""
    lines = [
        "| page | server ms | longest Redis call ms | its command | commands |",
        "|---|---:|---:|---|---:|",
    ]
    lines += [
        f"| {row.page} | {row.server_ms:.0f} | {row.longest_ms:.2f} | {row.longest} "
        f"| {row.commands} |"
        for row in rows
    ]
    return "\n".join(lines)


def medians(rounds: Sequence[Sequence[Measured]]) -> list[Measured]:
    """Each page over rounds of `pages`: its median server time, and its longest command
    once each command keeps its shortest time over the rounds (see `steadiest`)."""
    rows = []
    for same in zip(*rounds, strict=True):
        first, durations = same[0], steadiest([row.durations for row in same])
        seconds = statistics.median(row.server_ms for row in same) / 1000
        rows.append(_measured(first.page, first.path, first.status, first.text, seconds, durations))
    return rows


def warm_up(http: TestClient[object]) -> None:
    """Open a connection and load the scripts the pages use: not what is measured."""
    http.get("/")
    http.get("/job?jid=warm-up", follow_redirects=True)


def main() -> None:
    """Load a private Redis, measure every page (medians over `--rounds`), print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=SIZE)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        server, url = start_redis(Path(directory))
        try:
            client = redis.Redis.from_url(url)
            seconds = load(client, options.size)
            log_every_command(client)
            with TestClient(create_app(cogworker.Config(redis_url=url))) as http:
                warm_up(http)
                rows = medians([pages(http, client) for _ in range(options.rounds)])
        finally:
            server.terminate()
            server.wait()
    size = options.size
    print(f"{size:,} dead, {size:,} retries, {size:,} queued (loaded in {seconds:.1f} s); "
          f"medians of {options.rounds} rounds\n")  # fmt: skip
    print(table(rows))


if __name__ == "__main__":
    main()
