"""Who writes a run's outcome when its time limit and its own end race: exactly one of the
runner and the watchdog, and a stale look never touches a later run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cogworker.adapters import redis_keys as keys
from cogworker.app.worker import pulse
from cogworker.app.worker.state import RunningJob, WorkerState
from cogworker.exceptions import JobTimeoutError

RAW = b'{"class":"app.Job","queue":"q","jid":"j1","args":[]}'


def running(state: WorkerState, runner: str = "processor-0", jid: str = "j1") -> RunningJob:
    """Note `jid` running on `runner` with a 1 s limit."""
    work = RunningJob(jid, "app.Job", "q", RAW, 100.0, 1.0)
    state.started(runner, work)
    return work


def test_the_watchdog_claiming_first_leaves_the_runner_nothing_to_write() -> None:
    """The watchdog's claim wins: the runner, ending late, writes nothing; a stop no longer
    waits for it until it is idle again."""
    state = WorkerState(identity="h:1:a")
    running(state)
    assert state.claim_settlement("processor-0", "j1", abandon=True)
    assert not state.claim_settlement("processor-0", "j1")
    assert state.abandoned() == {"processor-0"}
    state.finished("processor-0")
    assert state.abandoned() == set()


def test_the_runner_claiming_first_leaves_the_watchdog_nothing_to_file() -> None:
    """The run's own end wins: the watchdog files nothing and abandons no thread."""
    state = WorkerState(identity="h:1:a")
    running(state)
    assert state.claim_settlement("processor-0", "j1")
    assert not state.claim_settlement("processor-0", "j1", abandon=True)
    assert state.abandoned() == set()


def test_a_stale_look_claims_and_interrupts_nothing() -> None:
    """Once the run has ended (or another runs on the thread), neither a claim nor an
    interrupt goes through, and no interrupt waits for a later run of the same job."""
    state = WorkerState(identity="h:1:a")
    running(state)
    state.finished("processor-0")
    assert not state.claim_settlement("processor-0", "j1", abandon=True)
    assert not state.interrupt_running("processor-0", "j1", JobTimeoutError)
    running(state, jid="j2")
    assert not state.interrupt_running("processor-0", "j1", JobTimeoutError)
    assert state.interrupts.requested("j1") is None
    assert state.interrupt_running("processor-0", "j2", JobTimeoutError)
    assert state.interrupts.requested("j2") is JobTimeoutError


@pytest.mark.processes  # a `cat` stands in for the pulse's stdin
def test_the_pulse_is_told_each_limited_run_once_and_its_claim_once(tmp_path: Path) -> None:
    """A run with a limit is told to the pulse as it starts (its hard deadline from now,
    its mark) and forgotten once, at its claim (not again as it ends); a run without a
    limit is never told."""
    told = tmp_path / "told"
    with told.open("wb") as sink:
        companion = pulse.Pulse(subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=sink))
    state = WorkerState(identity="h:1:a")
    state.run_watcher = pulse.RunWatch(companion, grace=0.5, clock=lambda: 100.25)
    running(state)
    state.started("processor-1", RunningJob("j2", "app.Job", "q", RAW, 100.0))
    assert state.claim_settlement("processor-0", "j1")
    state.finished("processor-0")
    state.finished("processor-1")
    companion.stop()
    plus, minus = told.read_text().splitlines()
    assert plus == f"+ j1 1.25 100.0,1.0,0.5 {keys.hard_timeout_mark('q', 'j1')}"
    assert minus == "- j1"
