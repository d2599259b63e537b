"""What becomes of a failed attempt: retry (after which delay), dead or discard.

Everything that decides the fate of a failure lives in this module; the
shell only gathers (calls the job class's `retry_in` hook through
`adapters.user_hooks`); `settlement.settle` asks `decide`.

The rules (README "Retries and Dead", "Custom delay", "Death hooks"):

* A failure that is the last one anyway (no retry left, or `retry=False`/`0`)
  is `Dead` without asking the hook; so is nothing asked of a class without
  a hook or whose class can't be loaded (`NO_HOOK`): the budget decides.
* Otherwise the hook's answer decides:

  ===========================  ===============================================
  hook answer                  decision
  ===========================  ===============================================
  int / float >= 0, finite     `Retry(delay=value)`: used as given, no jitter,
                               capped at a hundred years (`LONGEST_DELAY`;
                               over a year is logged as a likely unit mix-up)
  `None`                       `Retry(delay=None)`: the default backoff
  `KILL`                       `Dead(killed=True)`: the death hooks run
  `DISCARD`                    `Discard()`: neither retry nor dead, no hooks
  anything else (a bool too)   the default backoff, with a warning
  it raised                    the default backoff, with an error
  ===========================  ===============================================

What a decision then writes (locks, status, records, and where an
interrupted write sends the job) is `settlement`'s.

Pure: no I/O, no clock, no randomness (the jitter is a parameter), no logging.
"""

from __future__ import annotations

import enum
import math
from typing import Literal, TypeAlias, assert_never

import attrs

from cogworker.domain.job import ErrorRecord, JobRecord
from cogworker.domain.retries import LONGEST_DELAY, default_backoff, is_last_failure

#: Used as given (up to LONGEST_DELAY); but a delay past this is most likely
#: a unit mix-up (ms for s), and it keeps an `until_executed` lock that long.
LONG_DELAY = 365 * 24 * 60 * 60
#: How much of an unexpected hook value a log line quotes.
_QUOTE_LIMIT = 200


class Verdict(enum.Enum):
    """What a `retry_in` hook returns to end a job before its retries run out."""

    KILL = "kill"
    DISCARD = "discard"

    def __repr__(self) -> str:
        return f"cogworker.{self.name}"


#: Straight to dead, retries left or not; the death hooks run.
KILL = Verdict.KILL
#: Dropped: neither retry nor dead, no death hooks.
DISCARD = Verdict.DISCARD


@attrs.frozen(kw_only=True)
class Retry:
    """Retry the job after `delay` seconds (`None`: the default backoff)."""

    delay: float | None = None


@attrs.frozen(kw_only=True)
class Dead:
    """File the job in dead for good; `killed` when its hook ended it early."""

    killed: bool = False


@attrs.frozen(kw_only=True)
class Discard:
    """Drop the job: neither retry nor dead, no death hooks (only a hook says so)."""


FailureDecision: TypeAlias = Retry | Dead | Discard


@attrs.frozen(kw_only=True)
class HookReturned:
    """The `retry_in` hook returned `value` (anything: it is user code)."""

    value: object


@attrs.frozen(kw_only=True)
class HookRaised:
    """The `retry_in` hook raised; `error` is what it raised."""

    error: ErrorRecord


@attrs.frozen
class NoHook:
    """The job class has no `retry_in` hook, or couldn't be loaded."""


NO_HOOK = NoHook()

HookAnswer: TypeAlias = HookReturned | HookRaised | NoHook


@attrs.frozen(kw_only=True)
class Note:
    """A line the shell must log about a decision."""

    level: Literal["warning", "error"]
    text: str


@attrs.frozen(kw_only=True)
class Decided:
    """A decision, and what to log about it (if anything)."""

    decision: FailureDecision
    note: Note | None = None


def hook_is_consulted(job: JobRecord, has_hook: bool) -> bool:
    """Whether the shell should call the `retry_in` hook about `job`'s failure."""
    return has_hook and not is_last_failure(job)


def decide(job: JobRecord, answer: HookAnswer) -> Decided:
    """The fate of `job`'s failed current attempt, given what its hook said.

    Total: the last failure is dead whatever `answer` is (the hook is never
    consulted about it), and any answer gives a decision.
    """
    if is_last_failure(job):
        return Decided(decision=Dead())
    match answer:
        case NoHook():
            return Decided(decision=Retry())
        case HookRaised(error=error):
            text = (
                f"retry_in of {job.class_name} raised for jid={job.jid} "
                f"(using the default backoff): {error.class_name}: {error.message}"
            )
            return Decided(decision=Retry(), note=Note(level="error", text=text))
        case HookReturned(value=value):
            return _from_value(job, value)
        case _:
            assert_never(answer)


def _from_value(job: JobRecord, value: object) -> Decided:
    # Identity, not `==`: a user object's __eq__ has no say here.
    if value is None:
        return Decided(decision=Retry())
    if value is KILL:
        return Decided(decision=Dead(killed=True))
    if value is DISCARD:
        return Decided(decision=Discard())
    delay = as_delay(value)
    if delay is None:
        text = (
            f"retry_in of {job.class_name} returned {_quote(value)} for jid={job.jid}; "
            "using the default backoff (expected seconds >= 0, None, cogworker.KILL "
            "or cogworker.DISCARD)"
        )
        return Decided(decision=Retry(), note=Note(level="warning", text=text))
    note = None
    if delay > LONG_DELAY:
        used = "as given" if delay <= LONGEST_DELAY else f"capped at {LONGEST_DELAY}s (100 years)"
        text = (
            f"retry_in of {job.class_name} returned {_quote(value)}s (over a year) "
            f"for jid={job.jid}; using it {used}"
        )
        note = Note(level="warning", text=text)
    return Decided(decision=Retry(delay=min(delay, LONGEST_DELAY)), note=note)


def as_delay(value: object) -> float | None:
    """`value` as a delay in seconds: an int or float >= 0 and finite, not a bool."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        delay = float(value)
    except OverflowError:  # an int too big for a float: no usable time
        return None
    if not math.isfinite(delay) or delay < 0:
        return None
    return delay


def _quote(value: object) -> str:
    # The value is user code's: its repr may raise or be huge.
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__qualname__} object>"
    if len(text) > _QUOTE_LIMIT:
        text = text[: _QUOTE_LIMIT - 3] + "..."
    return text


def retry_delay(decision: Retry, count: int, jitter: float) -> float:
    """Seconds before retry number `count` (1 for the first): the hook's, or the default.

    `jitter` in [0, 30) is only used by the default backoff: a hook's delay
    is used exactly.
    """
    if decision.delay is not None:
        return min(decision.delay, LONGEST_DELAY)
    return min(default_backoff(count, jitter), LONGEST_DELAY)
