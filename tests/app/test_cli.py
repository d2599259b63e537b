"""`cogworker work`: a bad APP is a clear error, --config applies, weighted queues are served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from tests.app.helpers import Workers, last_beat, logs, process_hash, wait_for_processes
from tests.app.jobs import RecordHeavy, RecordLight, RecordToml
from tests.support.processes import wait_until

BAD_APPS = [
    pytest.param("tests.app.no_such_module", "no module tests.app.no_such_module", id="no-module"),
    pytest.param(
        "tests.app.jobs:not_a_config",
        "expected a cogworker.Config at not_a_config",
        id="not-config",
    ),
    pytest.param(
        "tests.app.jobs:missing_attr", "expected a cogworker.Config at missing_attr", id="no-attr"
    ),
]


@pytest.mark.parametrize(("app", "says"), BAD_APPS)
def test_work_with_a_bad_app_exits_non_zero_with_a_clear_message(
    workers: Workers, app: str, says: str
) -> None:
    """`cogworker work` with an APP that isn't a Config exits non-zero, saying what is wrong."""
    worker = workers.start(app)

    status = worker.wait_for_exit(20.0)

    assert status != 0
    assert says in worker.log_text()
    assert "Traceback" not in worker.log_text()


def test_config_file_settings_apply(
    rc: redis.Redis, client: cogworker.Client, workers: Workers, tmp_path: Path
) -> None:
    """A `--config` TOML file's concurrency, queues and heartbeat interval are the process's."""
    settings = tmp_path / "cogworker.toml"
    settings.write_text(
        '[cogworker]\nconcurrency = 3\nqueues = ["tomlq", "default"]\nheartbeat_interval = 0.6\n'
    )
    worker = workers.start(extra_args=["--config", str(settings)])
    [identity] = wait_for_processes(rc, 1, worker)

    registered = process_hash(rc, identity)
    assert registered["concurrency"] == "3"
    assert [name for name, _ in json.loads(registered["queues"])] == ["tomlq", "default"]
    jid = client.enqueue(RecordToml, "from toml")
    wait_until(
        lambda: rc.sismember("done", jid),
        10.0,
        message=lambda: f"the tomlq job never ran; log:\n{worker.log_tail()}",
    )
    # Two heartbeats in a row are at least the file's 0.6 s apart (the APP config says 0.2 s).
    beats = [last_beat(rc, identity)]
    for _ in range(2):
        beats.append(
            wait_until(
                lambda: (beat := last_beat(rc, identity)) > beats[-1] and beat,
                10.0,
                interval=0.01,
                message="no next heartbeat",
            )
        )
    assert beats[2] - beats[1] >= 0.55


def test_weighted_queues_are_both_served(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """With `-q heavy,3 -q light,1` the jobs of both queues run."""
    heavy = client.enqueue_many(RecordHeavy, ([n] for n in range(30)))
    light = client.enqueue_many(RecordLight, ([n] for n in range(30)))
    worker = workers.start(queues=["heavy,3", "light,1"])
    [identity] = wait_for_processes(rc, 1, worker)

    wait_until(
        lambda: rc.scard("done") == len(heavy) + len(light),
        20.0,
        message=lambda: f"{rc.scard('done')} of 60 ran; log:\n{logs(worker)}",
    )

    assert rc.smembers("done") == {jid.encode() for jid in [*heavy, *light] if jid}
    assert rc.llen(keys.queue("heavy")) == rc.llen(keys.queue("light")) == 0
    assert json.loads(process_hash(rc, identity)["queues"]) == [["heavy", 3], ["light", 1]]
