"""The supervisor's decisions: how long before a dead worker child is restarted, whom to recycle.

`cogworker work --processes N` keeps N worker children running.  A child
that keeps dying at start-up must not be restarted in a tight loop, and one
that ran for a good while and then died once deserves a quick restart; a
child above the memory limit is recycled (stopped gracefully, then replaced).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

#: The first restart's delay in seconds; each quick death in a row doubles it ...
RESTART_INITIAL = 1.0
#: ... up to this ceiling ...
RESTART_MAXIMUM = 30.0
#: ... and a child that stayed up this long starts the count again from RESTART_INITIAL.
STABLE_UPTIME = 30.0


def restart_delay(previous: float | None, uptime: float) -> float:
    """Seconds to wait before restarting a child that died after `uptime` seconds.

    `previous` is the delay before the restart of the child that died, None
    if it was the first start.  A child that crashes at start-up is thus
    restarted after 1, 2, 4, ... 30, 30, ... seconds; one that ran for
    STABLE_UPTIME or more comes back after RESTART_INITIAL again.
    """
    if previous is None or uptime >= STABLE_UPTIME:
        return RESTART_INITIAL
    return min(RESTART_MAXIMUM, max(previous, RESTART_INITIAL) * 2)


def to_recycle(
    rss_kib: Mapping[int, int | None], limit_kib: int, stopping: Collection[int] = ()
) -> list[int]:
    """The pids (sorted) whose resident memory is above `limit_kib`.

    A child already `stopping` is left alone (it is draining; telling it
    again changes nothing), and so is one whose memory could not be read:
    recycling on a guess would stop healthy children.
    """
    return sorted(
        pid
        for pid, kib in rss_kib.items()
        if kib is not None and kib > limit_kib and pid not in stopping
    )
