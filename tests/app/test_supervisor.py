"""`cogworker work APP --processes N` (and `--max-memory`): a supervisor and its worker children.

Real processes on a real Redis: the supervisor is the process the test
starts, its children are found through the identities they register
(`host:pid:random`) and checked to be its children in /proc.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.app.supervisor import STOP_GRACE
from tests.app.helpers import (
    Workers,
    identities,
    logs,
    process_hash,
    queue_payloads,
    wait_for_beats_over,
)
from tests.app.jobs import Count, Gate, Sleeper
from tests.support.processes import CogworkerProcess, wait_until

# --- reading the process table ----------------------------------------------------


def parent_of(pid: int) -> int | None:
    """The parent pid of a live process; None if it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, parent = stat.rpartition(")")[2].split()[:2]  # the name may hold spaces
    return None if state in ("Z", "X") else int(parent)


def pid_of(identity: str) -> int:
    """The pid in a `host:pid:random` identity."""
    return int(identity.rsplit(":", 2)[1])


def children(rc: redis.Redis, supervisor: CogworkerProcess) -> dict[str, int]:
    """The registered identities (with their pids) of the supervisor's live children."""
    found = {identity: pid_of(identity) for identity in identities(rc)}
    return {identity: pid for identity, pid in found.items() if parent_of(pid) == supervisor.pid}


def wait_for_children(
    rc: redis.Redis, supervisor: CogworkerProcess, count: int, timeout: float = 15.0
) -> dict[str, int]:
    """Wait until exactly `count` live children of the supervisor are registered."""

    def registered() -> dict[str, int] | None:
        found = children(rc, supervisor)
        return found if len(found) == count else None

    return wait_until(
        registered,
        timeout,
        message=lambda: (
            f"not {count} children registered ({children(rc, supervisor)}); "
            f"log:\n{supervisor.log_tail(60)}"
        ),
    )


def start_supervisor(workers: Workers, *args: str, concurrency: int = 2) -> CogworkerProcess:
    """`cogworker work tests.app.jobs:fast_config -c N ARGS...`."""
    return workers.start(concurrency=concurrency, extra_args=list(args))


def run_counts(
    rc: redis.Redis, client: cogworker.Client, count: int, worker: CogworkerProcess
) -> list[str | None]:
    """Enqueue `count` Count jobs and wait until each of them has run."""
    jids = client.enqueue_many(Count, ([n] for n in range(count)))
    wait_until(
        lambda: rc.scard("count:jids") >= len(jids),
        15.0,
        message=lambda: f"{rc.scard('count:jids')} of {len(jids)} ran; log:\n{logs(worker)}",
    )
    assert {jid.decode() for jid in rc.smembers("count:jids")} >= set(filter(None, jids))
    return jids


def assert_clean_exit(rc: redis.Redis, supervisor: CogworkerProcess, pids: list[int]) -> None:
    """SIGTERM the supervisor: it exits 0, its children are gone and unregistered."""
    assert supervisor.terminate(15.0) == 0, supervisor.log_tail()
    assert all(parent_of(pid) is None for pid in pids)
    assert identities(rc) == []
    assert list(rc.scan_iter(match="cogworker:{q:*}:inprogress:*")) == []


def quiet_every_child(rc: redis.Redis, supervisor: CogworkerProcess, found: dict[str, int]) -> None:
    """SIGTSTP to the supervisor; wait until each child in `found` says it is quiet."""
    supervisor.send_signal(signal.SIGTSTP)
    wait_until(
        lambda: all(process_hash(rc, identity).get("quiet") == "true" for identity in found),
        10.0,
        message=lambda: f"not every child is quiet; log:\n{supervisor.log_tail()}",
    )


# --- real supervisors --------------------------------------------------------------


def test_two_processes_each_register_and_run_jobs_exactly_once(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """`--processes 2 -c 3`: two children with their own identities and the given options;
    six gated jobs run at once (so on both), then 200 jobs run exactly once."""
    supervisor = start_supervisor(workers, "--processes", "2", concurrency=3)
    found = wait_for_children(rc, supervisor, 2)
    assert len(set(found.values())) == 2
    assert all(process_hash(rc, identity)["concurrency"] == "3" for identity in found)

    gated = client.enqueue_many(Gate, [["g"]] * 6)
    wait_until(
        lambda: rc.scard("started") == 6,
        15.0,
        message=lambda: f"{rc.scard('started')} of 6 gated jobs started; log:\n{logs(supervisor)}",
    )
    rc.set("gate:g", 1)
    wait_until(lambda: rc.scard("finished") == 6, 15.0, message=supervisor.log_tail)
    assert {jid.decode() for jid in rc.smembers("finished")} == set(gated)

    jids = run_counts(rc, client, 200, supervisor)
    assert int(rc.get("count:total") or 0) == len(jids) == 200

    assert_clean_exit(rc, supervisor, list(found.values()))


def test_a_killed_child_is_replaced_and_jobs_keep_running(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """kill -9 of one child: the supervisor stays up, logs the signal, and a new child (a new
    identity and pid) comes up; jobs then run exactly once."""
    supervisor = start_supervisor(workers, "--processes", "2")
    before = wait_for_children(rc, supervisor, 2)
    victim = min(before.values())

    os.kill(victim, signal.SIGKILL)

    def replaced() -> dict[str, int] | None:
        found = children(rc, supervisor)
        return found if len(found) == 2 and victim not in found.values() else None

    after = wait_until(
        replaced, 15.0, message=lambda: f"no replacement child; log:\n{supervisor.log_tail(60)}"
    )
    assert set(after) - set(before), "the replacement has a new identity"
    assert supervisor.is_running
    assert f"worker process {victim} exited (signal SIGKILL)" in supervisor.log_text()

    jids = run_counts(rc, client, 50, supervisor)
    assert int(rc.get("count:total") or 0) == len(jids)

    assert supervisor.terminate(15.0) == 0


def test_sigterm_to_the_supervisor_drains_every_child_and_loses_no_job(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """SIGTERM to the supervisor (shutdown_timeout 2 s): a 1 s job finishes, a 60 s job is back
    on its queue once, every child has exited and unregistered, and the supervisor exits 0."""
    supervisor = start_supervisor(workers, "--processes", "2")
    found = wait_for_children(rc, supervisor, 2)
    short = client.enqueue(Sleeper, 1.0)
    long = client.enqueue(Sleeper, 60.0)
    assert short is not None
    assert long is not None
    wait_until(
        lambda: rc.scard("started") == 2,
        15.0,
        message=lambda: f"the jobs never started; log:\n{supervisor.log_tail()}",
    )

    supervisor.send_signal(signal.SIGTERM)

    assert supervisor.wait_for_exit(15.0) == 0
    assert rc.smembers("finished") == {short.encode()}
    assert [job["jid"] for job in queue_payloads(rc, "default")] == [long]
    assert all(parent_of(pid) is None for pid in found.values())
    assert identities(rc) == []
    assert list(rc.scan_iter(match="cogworker:{q:*}:inprogress:*")) == []
    assert "restarting" not in supervisor.log_text()


def test_sigtstp_to_the_supervisor_quiets_every_child(rc: redis.Redis, workers: Workers) -> None:
    """SIGTSTP to the supervisor reaches every child (quiet), and the supervisor stays up."""
    supervisor = start_supervisor(workers, "--processes", "2")
    found = wait_for_children(rc, supervisor, 2)

    quiet_every_child(rc, supervisor, found)

    assert supervisor.is_running
    assert children(rc, supervisor) == found
    assert_clean_exit(rc, supervisor, list(found.values()))


def test_a_child_started_after_sigtstp_starts_quiet(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """After SIGTSTP, a child that dies is replaced by a quiet one: the fleet stays quiet and
    a job enqueued then stays on its queue."""
    supervisor = start_supervisor(workers, "--processes", "2")
    before = wait_for_children(rc, supervisor, 2)
    quiet_every_child(rc, supervisor, before)
    victim = min(before.values())

    os.kill(victim, signal.SIGKILL)

    def replacement() -> str | None:
        new = set(children(rc, supervisor)) - set(before)
        return new.pop() if new else None

    identity = wait_until(
        replacement, 15.0, message=lambda: f"no replacement child; log:\n{supervisor.log_tail()}"
    )
    assert process_hash(rc, identity)["quiet"] == "true"
    jid = client.enqueue(Count, 1)
    assert jid is not None
    wait_for_beats_over(rc, identity, 1.0, supervisor)
    assert rc.llen(keys.queue("default")) == 1
    assert not rc.sismember("count:jids", jid)
    assert supervisor.terminate(15.0) == 0


def test_a_child_hung_at_stop_is_killed_and_its_job_is_kept_for_recovery(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """SIGTERM to the supervisor while one child is frozen (SIGSTOP) with a job: the other
    child stops cleanly; the frozen one is killed once shutdown_timeout (2 s) + STOP_GRACE
    have passed, the supervisor exits, and the job is still on the dead child's in-progress
    list, where orphan recovery finds it: nothing is lost."""
    supervisor = start_supervisor(workers, "--processes", "2")
    found = wait_for_children(rc, supervisor, 2)
    jid = client.enqueue(Sleeper, 60.0)
    assert jid is not None
    wait_until(
        lambda: rc.scard("started") == 1,
        15.0,
        message=lambda: f"the job never started; log:\n{supervisor.log_tail()}",
    )
    [holder] = [i for i in found if rc.llen(f"cogworker:{{q:default}}:inprogress:{i}") == 1]
    os.kill(found[holder], signal.SIGSTOP)

    supervisor.send_signal(signal.SIGTERM)

    assert supervisor.wait_for_exit(2.0 + STOP_GRACE + 15.0) == 0
    text = supervisor.log_text()
    assert f"worker process {found[holder]} still running" in text
    assert f"worker process {found[holder]} exited (signal SIGKILL)" in text
    assert all(parent_of(pid) is None for pid in found.values())
    assert identities(rc) == [holder]  # the dead child's presence expires; it never unregistered
    [held] = rc.lrange(f"cogworker:{{q:default}}:inprogress:{holder}", 0, -1)
    assert json.loads(held)["jid"] == jid


def test_children_drain_and_exit_when_the_supervisor_is_killed(
    rc: redis.Redis, workers: Workers
) -> None:
    """kill -9 of the supervisor: its children get SIGTERM (PR_SET_PDEATHSIG), stop cleanly
    (unregistered) and exit, instead of running on as orphans."""
    supervisor = start_supervisor(workers, "--processes", "2")
    found = wait_for_children(rc, supervisor, 2)

    supervisor.kill()

    wait_until(
        lambda: identities(rc) == [] and all(parent_of(pid) is None for pid in found.values()),
        15.0,
        message=lambda: f"children still there: {identities(rc)}; log:\n{supervisor.log_tail()}",
    )


def enqueue_until(client: cogworker.Client, done: threading.Event) -> list[str]:
    """Enqueue a Count job every 10 ms until `done` is set; their jids."""
    pushed: list[str] = []
    while not done.is_set():
        jid = client.enqueue(Count, len(pushed))
        if jid is not None:
            pushed.append(jid)
        time.sleep(0.01)
    return pushed


def test_max_memory_recycles_children_gracefully_without_losing_jobs(
    rc: redis.Redis, client: cogworker.Client, workers: Workers
) -> None:
    """`--max-memory 1` (MiB, below any Python process): each child is recycled, a graceful
    stop (it unregisters) followed by a new child, while jobs enqueued all along each run
    exactly once."""
    supervisor = start_supervisor(workers, "--processes", "2", "--max-memory", "1")
    before = wait_for_children(rc, supervisor, 2)

    done = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pushing = pool.submit(enqueue_until, client, done)
        try:
            # Both first children stopped cleanly (unregistered), were reaped, and replaced.
            wait_until(
                lambda: (
                    not set(before) & set(identities(rc))
                    and all(
                        f"worker process {pid} recycled" in supervisor.log_text()
                        for pid in before.values()
                    )
                    and children(rc, supervisor)
                ),
                15.0,
                message=lambda: f"the children weren't recycled; log:\n{supervisor.log_tail(60)}",
            )
        finally:
            done.set()
        pushed = pushing.result(timeout=10.0)

    text = supervisor.log_text()
    assert "above --max-memory 1 MiB: recycling it" in text
    assert "restarting" not in text
    wait_until(
        lambda: rc.scard("count:jids") == len(pushed),
        15.0,
        message=lambda: f"{rc.scard('count:jids')} of {len(pushed)} ran; log:\n{logs(supervisor)}",
    )
    assert {jid.decode() for jid in rc.smembers("count:jids")} == set(pushed)
    assert int(rc.get("count:total") or 0) == len(pushed)
    assert supervisor.terminate(15.0) == 0
    assert list(rc.scan_iter(match="cogworker:{q:*}:inprogress:*")) == []


@pytest.mark.parametrize(
    ("app", "config", "says"),
    [
        pytest.param(
            "tests.app.no_such_module", None, "no module tests.app.no_such_module", id="app"
        ),
        pytest.param("tests.app.jobs", "bogus = 1\n", "unknown config settings", id="config"),
    ],
)
def test_a_bad_app_or_config_fails_once_before_any_child_starts(
    rc: redis.Redis, workers: Workers, tmp_path: Path, app: str, config: str | None, says: str
) -> None:
    """With `--processes 2`, a bad APP or --config file is one clear error and a non-zero exit,
    the same as without --processes; no child is started."""
    extra = ["--processes", "2"]
    if config is not None:
        (tmp_path / "bad.toml").write_text(config)
        extra += ["--config", str(tmp_path / "bad.toml")]
    supervisor = workers.start(app, extra_args=extra)

    assert supervisor.wait_for_exit(20.0) != 0
    text = supervisor.log_text()
    assert text.count(says) == 1, text
    assert "Traceback" not in text
    assert "supervisor" not in text
    assert identities(rc) == []
