"""What a process makes of the layout it finds in Redis: go, write the number, or refuse.

The steps and their plan are `domain.layout`; a worker, a client and the
dashboard each ask `adapters.layout_store` for the verdict before their
first write, and a refusal names the command that cures it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import attrs

from cogworker.domain.layout import MIGRATE, STEPS, Step, current, is_old


@attrs.frozen(kw_only=True)
class Ready:
    """Redis holds this code's layout: go."""


@attrs.frozen(kw_only=True)
class Fresh:
    """No layout number, and none of the keys the steps move: a Redis holding no data of an
    older layout.  Write `number` (only if still missing, SET NX) and go."""

    number: int


@attrs.frozen(kw_only=True)
class Outdated:
    """Redis holds an older layout than this code's: refuse until the steps are applied."""

    stored: int
    current: int

    @property
    def problem(self) -> str:
        """The refusal, naming the command that cures it."""
        return (
            f"this Redis holds cogworker keys of layout {self.stored}, this code uses layout "
            f"{self.current}: stop the workers and run `{MIGRATE}` (`--dry-run` shows what "
            "it would move)"
        )


@attrs.frozen(kw_only=True)
class Newer:
    """Redis holds a newer layout than this code's (a newer release migrated it): refuse,
    rather than write keys where the newer code no longer looks."""

    stored: int
    current: int

    @property
    def problem(self) -> str:
        """The refusal, naming the cure."""
        return (
            f"this Redis holds cogworker keys of layout {self.stored}, newer than this code's "
            f"layout {self.current}: upgrade cogworker"
        )


Verdict = Ready | Fresh | Outdated | Newer


def verdict(stored: int | None, found: Collection[str], steps: tuple[Step, ...] = STEPS) -> Verdict:
    """What a process does on a Redis holding layout `stored` (None: missing), where
    `found` are keys that exist: those of `old_names(steps)`, and any of `old_families`."""
    latest = current(steps)
    if stored is None:
        if any(is_old(name, steps) for name in found):
            return Outdated(stored=0, current=latest)
        return Fresh(number=latest)
    if stored < latest:
        return Outdated(stored=stored, current=latest)
    if stored > latest:
        return Newer(stored=stored, current=latest)
    return Ready()


def refusal(verdict: Verdict) -> str | None:
    """Why a process of this code must not go on with this verdict; None: it may."""
    return verdict.problem if isinstance(verdict, Outdated | Newer) else None


def still_beating(beats: Mapping[str, float | None], now: float, threshold: float) -> list[str]:
    """The processes (sorted) whose latest beat is younger than `threshold` seconds at
    `now`: workers still running, which a migration must wait for (they would go on
    writing keys where their code looks).  None: no beat found (the process is gone)."""
    return sorted(
        identity for identity, beat in beats.items() if beat is not None and now - beat < threshold
    )
