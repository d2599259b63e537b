"""`cogworker retry|kill|delete|cancel JID...` and `cogworker enqueue CLASS [ARGS]`.

A jid is found where the dashboard's job page finds it (`web.locate`) and
acted on as its buttons act (`web.sets.apply`, `web.removal.delete_queued`):
the same at-most-once scripts, locks let go of, death handlers run on a kill.
Cancelling and enqueueing go through `Client`, as any producer's do.
"""

from __future__ import annotations

import json
from typing import Literal

import attrs
import click

from cogworker.app.cli.app_loading import import_from_cwd
from cogworker.app.cli.output import answer, table, warn
from cogworker.app.cli.session import Session, inspecting
from cogworker.app.client import Client
from cogworker.app.job_loading import load_job_class
from cogworker.app.job_record import Expiry, build_job, check_jid
from cogworker.app.web.locate import Place, locate
from cogworker.app.web.removal import delete_queued
from cogworker.app.web.sets import KINDS, Action, apply
from cogworker.domain.json_values import JSON
from cogworker.domain.queues import checked_name
from cogworker.exceptions import UnknownJobClassError

Verb = Literal["retry", "kill", "delete"]
#: What each verb does to an entry of a set, in order of preference (a scheduled job is
#: "retried" by enqueueing it now).
ACTIONS: dict[Verb, tuple[Action, ...]] = {
    "retry": ("retry", "enqueue"),
    "kill": ("kill",),
    "delete": ("delete",),
}
#: What a verb did, as the answer says it.
DONE = {"retry": "retried", "enqueue": "enqueued", "kill": "killed", "delete": "deleted"}


@attrs.frozen(kw_only=True)
class Acted:
    """What became of one jid: whether the action was taken, what happened, and where the
    job was (as the job page tags it, lower case; "" if it wasn't found)."""

    jid: str
    done: bool
    outcome: str
    was: str = ""


def act_on(session: Session, verb: Verb, jid: str) -> Acted:
    """Do `verb` to the job `jid` wherever the dashboard's job page would find it."""
    store = session.store
    place = locate(store, jid)
    if place is None:
        return Acted(jid=jid, done=False, outcome="not found")
    where = place.tag.lower()
    if not place.slug:
        if verb == "delete" and place.tag == "Enqueued":
            deleted = delete_queued(store.queues, place.where, jid)
            return Acted(jid=jid, done=deleted, outcome="deleted" if deleted else "gone", was=where)
        return Acted(jid=jid, done=False, outcome=_refusal(verb, place), was=where)
    kind = KINDS[place.slug]
    action = next((action for action in ACTIONS[verb] if action in kind.actions), None)
    if action is None:
        return Acted(jid=jid, done=False, outcome=_refusal(verb, place), was=where)
    now = store.now()
    result = apply(store, session.config, kind, action, [place.view], now, by="the command line")
    said = DONE[action] if result.done else "not a job" if result.skipped else "gone"
    return Acted(jid=jid, done=bool(result.done), outcome=said, was=where)


def _refusal(verb: Verb, place: Place) -> str:
    """Why `verb` can't be done to a job where it is."""
    if place.tag == "Running":
        return f"refused: running on {place.where} (cancel it instead)"
    if place.tag == "Enqueued":
        return f"refused: already enqueued on {place.where}"
    return f"refused: a {place.tag.lower()} job can't be {DONE[verb]}"


def _verb_command(verb: Verb, summary: str) -> click.Command:
    """`cogworker VERB JID...`."""

    @click.argument("jids", nargs=-1, required=True, metavar="JID...")
    @inspecting
    def command(session: Session, jids: tuple[str, ...]) -> bool:
        acts = [act_on(session, verb, jid) for jid in jids]
        rows = [(act.jid, act.was, act.outcome) for act in acts]
        document = [attrs.asdict(act) for act in acts]
        answer(session.as_json, document, table(("JID", "WAS", "OUTCOME"), rows))
        return all(act.done for act in acts)

    return click.command(name=verb, help=summary)(command)


retry = _verb_command(
    "retry", "Put retrying, dead or scheduled jobs on their queues now (no hook runs)."
)
kill = _verb_command(
    "kill", "Move retrying jobs to the dead set (the config's death handlers run; see --app)."
)
delete = _verb_command(
    "delete", "Delete waiting jobs for good: queued, scheduled, retrying or dead (no hook runs)."
)


@click.command()
@click.argument("jids", nargs=-1, required=True, metavar="JID...")
@inspecting
def cancel(session: Session, jids: tuple[str, ...]) -> bool:
    """Cancel jobs: taken off if they wait, told to stop if they run (`Client.cancel`).

    Exits 1 unless every one was removed or signalled."""
    for jid in jids:  # every one checked before any is cancelled
        try:
            check_jid(jid)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="JID") from None
    client = Client(session.config, client=session.redis)
    results = [(jid, client.cancel(jid)) for jid in jids]
    document = [{"jid": jid, "result": result.value} for jid, result in results]
    answer(session.as_json, document, table(("JID", "RESULT"), [(j, r.value) for j, r in results]))
    return all(result.value in ("removed", "signalled") for _, result in results)


@click.command()
@click.argument("class_path", metavar="CLASS")
@click.argument("args_json", metavar="[ARGS]", default="[]")
@click.option("--queue", help="The queue to put it on (else its class's).")
@click.option(
    "--in", "seconds", type=click.FloatRange(min=0), metavar="SECONDS",
    help="Schedule it this many seconds from now.",
)  # fmt: skip
@inspecting
def enqueue(
    session: Session, class_path: str, args_json: str, queue: str | None, seconds: float | None
) -> bool:
    """Enqueue a run of CLASS (`package.module.Class`, imported from here) with ARGS, a JSON
    array, through the client middleware of --app's config.  Exits 1 if it wasn't enqueued
    (a middleware stopped it, or a unique job's lock is held)."""
    import_from_cwd()
    try:
        job_class = load_job_class(class_path, session.config.job_modules)
    except UnknownJobClassError as error:
        warn([str(error)])
        return False
    args = _arguments(args_json)
    now = session.store.now()
    due = None if seconds is None else now + seconds
    try:
        job = build_job(
            job_class, args, now, lock_ttl=session.config.unique_lock_ttl, expiry=Expiry(due=due),
            keep_result=session.config.keep_result,
        )  # fmt: skip
        if queue is not None:
            job = attrs.evolve(job, queue=checked_name(queue))
    except (TypeError, ValueError) as error:
        raise click.UsageError(str(error)) from None
    jid = Client(session.config, client=session.redis).push(job, at=due)
    document = {"jid": jid, "queue": job.queue, "at": due}
    answer(session.as_json, document, jid or "not enqueued (a middleware stopped it, or a lock)")
    return jid is not None


def _arguments(text: str) -> list[JSON]:
    """ARGS as a list of arguments; a usage error naming it if it isn't a JSON array."""
    try:
        value = json.loads(text)
    except ValueError as error:
        raise click.BadParameter(f"{text!r} is not JSON: {error}", param_hint="ARGS") from None
    if not isinstance(value, list):
        raise click.BadParameter(
            f"{text!r} is not a JSON array, like '[1, \"a\"]'", param_hint="ARGS"
        )
    return value
