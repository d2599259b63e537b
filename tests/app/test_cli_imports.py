"""What the inspecting commands load: Redis and the dashboard's listing modules, not its web
framework (Litestar and its templates were a third of each command's start-up)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import redis

from cogworker.adapters import redis_keys as keys
from tests.support.processes import REPO_ROOT, child_environment

#: One run of each module's commands, as a shell would type them (some answer "not found").
COMMANDS = [
    ["stats"],
    ["queues"],
    ["ps"],
    ["jobs", "dead"],
    ["enqueue", "tests.app.jobs.Record", "[1]"],
    ["retry", "no-such-jid"],
    ["cancel", "no-such-jid"],
    ["pause", "reports"],
    ["unpause", "reports"],
    ["quiet", "--all"],
    ["migrate", "--dry-run"],
]
#: Runs COMMANDS in one fresh interpreter, then writes the names of the modules it loaded.
RUN_THEM = """
import json, sys
from cogworker.app.cli import main
commands, url, listing = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
for args in commands:
    try:
        main([*args, "--redis-url", url])
    except SystemExit:
        pass
with open(listing, "w") as out:
    json.dump(sorted(sys.modules), out)
"""
NOT_IN_A_COMMAND = ("litestar", "jinja2", "uvicorn", "cogworker.app.web.app")


def test_the_inspecting_commands_never_load_the_dashboards_web_framework(
    redis_url: str, rc: redis.Redis, tmp_path: Path
) -> None:
    """`stats`, `jobs`, `retry`, `cancel`, `enqueue`, `pause`, `quiet`, `migrate`... run (the
    job is enqueued) and none of them imported Litestar, its templates or the dashboard app."""
    listing = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN_THEM, json.dumps(COMMANDS), redis_url, str(listing)],
        cwd=REPO_ROOT,
        env=child_environment(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert rc.llen(keys.queue("default")) == 1, done.stdout.decode(errors="replace")
    loaded = json.loads(listing.read_text())
    assert "cogworker.app.cli.migrate" in loaded  # the list is of a process that ran them
    unwanted = [
        name
        for name in loaded
        if any(name == top or name.startswith(f"{top}.") for top in NOT_IN_A_COMMAND)
    ]
    assert unwanted == []
