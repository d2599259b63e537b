"""How much is kept of what jobs leave behind, and for how long."""

from __future__ import annotations

import attrs

#: Day counters are kept this long (the dashboard charts up to 90 days).
DAY_COUNTER_TTL = 400 * 86_400
#: A job's orphanings counter outlives any sane retry schedule of a crash-looper.
ORPHANINGS_TTL = 30 * 86_400


@attrs.frozen(kw_only=True)
class Retention:
    """How much is kept, and for how long (seconds), of dead jobs and what is tracked."""

    dead_max_jobs: int = 10_000
    dead_max_age: float = 180 * 86_400
    attempts_kept: int = 25
    attempts_ttl: float = 180 * 86_400
    history_per_job: int = 25
    history_per_class: int = 100
    history_ttl: float = 86_400
    status_ttl: float = 30 * 60
    #: Per-class metrics last this long after their last run (see adapters.class_metrics).
    metrics_ttl: float = 72 * 3600

    def dead_trim(self, now: float) -> tuple[float, int]:
        """A queue's dead set's trim at `now`: entries scored below the first go, and past
        the second (the most kept, per queue), the oldest."""
        return now - self.dead_max_age, self.dead_max_jobs
