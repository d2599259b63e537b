"""The pulse: its script on a real Redis, and its process through an ACL user and a database."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import redis

import cogworker
from cogworker.adapters import redis_keys as keys
from cogworker.adapters.liveness import pulse_eval
from cogworker.app.worker import pulse
from tests.support.processes import wait_until


def test_the_pulse_script_stamps_a_present_process_by_redis_time(rc: redis.Redis) -> None:
    """A process with a heartbeat hash gets a fresh beat, loses its suspect mark, and its
    keys get their TTL."""
    rc.hset(keys.process("p1"), mapping={"beat": "0", "pid": "1"})
    rc.hset(keys.workers("p1"), "processor-0", "{}")
    rc.set(keys.suspect("p1"), "1")
    seconds, micros = rc.time()
    assert rc.execute_command("EVAL", *pulse_eval("p1", ttl=90, stale_after=1.0)) == 1
    beat = float(rc.hget(keys.process("p1"), "beat") or 0)
    assert beat >= seconds + micros / 1e6
    assert not rc.exists(keys.suspect("p1"))
    assert rc.hget(keys.process("p1"), "pid") == b"1"
    assert 0 < rc.ttl(keys.process("p1")) <= 90
    assert 0 < rc.ttl(keys.workers("p1")) <= 90


def test_the_pulse_script_never_brings_back_a_process_whose_hash_is_gone(
    rc: redis.Redis,
) -> None:
    """A process removed (clean stop, a recovery's verdict) or not yet beating, even one
    still registered: nothing is written."""
    rc.sadd(keys.PROCESSES, "gone")
    assert rc.execute_command("EVAL", *pulse_eval("gone", ttl=90, stale_after=1.0)) == 0
    assert rc.keys("*") == [keys.PROCESSES.encode()]


def test_the_pulse_process_beats_through_an_acl_user_and_a_database(
    rc: redis.Redis, redis_url: str
) -> None:
    """The pulse, on a URL with a user, a password and database 3, stamps the beat until
    stopped, then exits cleanly."""
    rc.acl_setuser("pulser", enabled=True, passwords=["+s3cret"], commands=["+@all"], keys=["*"])
    try:
        url = redis_url.replace("redis://", "redis://pulser:s3cret@").rsplit("/", 1)[0] + "/3"
        db3 = redis.Redis.from_url(url)
        db3.hset(keys.process("p1"), "beat", "0")
        config = cogworker.Config(redis_url=url, heartbeat_interval=0.1, orphan_threshold=1.0)
        companion = pulse.start(config, config.redis_target(), "p1", logging.getLogger("test"))
        assert companion is not None
        wait_until(lambda: float(db3.hget(keys.process("p1"), "beat") or 0) > 0, 20)
        companion.stop()
        assert companion.process.returncode == 0
        db3.flushdb()
    finally:
        rc.acl_deluser("pulser")


def test_the_pulse_script_leaves_a_recent_beat_to_the_heartbeat(rc: redis.Redis) -> None:
    """A beat younger than the staleness limit is the heartbeat's own: nothing is written."""
    seconds, micros = rc.time()
    recent = f"{seconds}.{micros:06d}"
    rc.hset(keys.process("p1"), "beat", recent)
    stamp = pulse_eval("p1", ttl=90, stale_after=60)
    assert rc.execute_command("EVAL", *stamp) == -1
    assert rc.hget(keys.process("p1"), "beat") == recent.encode()


#: Runs the beater as `pulse.start` does (`python -I -S`), then lists the modules it loaded.
RUN_AND_LIST = """
import sys
beater, listing = sys.argv[1], sys.argv[2]
with open(beater) as source:
    exec(compile(source.read(), beater, "exec"), {"__name__": "__main__", "__file__": beater})
with open(listing, "w") as out:
    out.write("\\n".join(sorted(sys.modules)))
"""
#: What the pulse must not load: each brings enum or re, or big tables (the idna codec's
#: stringprep and unicodedata), a third of the pulse's own memory (issue #19).
NOT_IN_THE_PULSE = (
    "enum", "re", "typing", "json", "socket", "signal", "encodings.idna", "unicodedata",
)  # fmt: skip


def test_the_pulse_beats_without_loading_enum_re_or_the_idna_codec(
    rc: redis.Redis, redis_url: str, tmp_path: Path
) -> None:
    """The beater, on a TCP URL whose host is a name (the idna codec's way in), stamps the
    beat, ends when its stdin closes, and none of those modules was loaded."""
    rc.hset(keys.process("p1"), "beat", "0")
    url = redis_url.replace("127.0.0.1", "localhost")
    config = cogworker.Config(redis_url=url, heartbeat_interval=0.1, orphan_threshold=1.0)
    listing = tmp_path / "modules.txt"
    beater = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", RUN_AND_LIST, str(pulse.BEATER), str(listing)],
        stdin=subprocess.PIPE,
    )
    assert beater.stdin is not None
    beater.stdin.write(pulse.settings_message(config, config.redis_target(), "p1"))
    beater.stdin.flush()
    try:
        wait_until(lambda: float(rc.hget(keys.process("p1"), "beat") or 0) > 0, 20)
    finally:
        beater.stdin.close()
        assert beater.wait(20) == 0
    loaded = listing.read_text().split("\n")
    assert "select" in loaded  # the list is the beater's
    assert [name for name in NOT_IN_THE_PULSE if name in loaded] == []
