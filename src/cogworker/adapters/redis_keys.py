"""Where everything lives in Redis.  Every key cogworker writes is named here.

Single-instance Redis (or a primary with replicas / Sentinel): some scripts
derive a job's queue key from its payload, which Redis Cluster forbids.
Keys added since follow the cluster layout of docs/redis-cluster.md already
(a queue's keys share its hash tag `{q:NAME}`).
"""

from __future__ import annotations

PREFIX = "cogworker:"
QUEUES = PREFIX + "queues"
PROCESSES = PREFIX + "processes"
#: The index of paused queues' names: a global set, written by single-key SADD/SREM
#: next to each queue's flag (`queue_paused`), for listing them; the flag is the truth
#: (`adapters/queue_pause.py`).  No fetch reads it.
PAUSED = PREFIX + "paused"
#: A queue's list is named this, the queue's name, then `QUEUE_TAIL`: the name is its hash
#: tag, `{q:NAME}`, which every key the queue owns shares (layout step 2).
QUEUE_HEAD = PREFIX + "{q:"
QUEUE_TAIL = "}:queue"
#: A process's in-progress lists: one per queue, `cogworker:{q:Q}:inprogress:P`, in the
#: queue's slot (layout step 10; before it one per process, `cogworker:inprogress:P`).
IN_PROGRESS_TAIL = "}:inprogress:"

#: How many layout steps this Redis has had applied (`domain.layout`; missing: none).
LAYOUT = PREFIX + "layout"

#: Every queue that ever held a part (counters, class histories, per-class metrics): what
#: merged reads go over (`adapters/parts.py`).
PARTS = PREFIX + "parts"

#: The sorted sets of jobs waiting for a time (or dead), by the name each queue's is called
#: (layout step 8: `cogworker:{q:NAME}:schedule`, `...:retry`, `...:dead`).
SET_NAMES = ("schedule", "retry", "dead")


def sorted_set(name: str, queue: str) -> str:
    """A queue's share of the scheduled, retry or dead set (`name`, one of `SET_NAMES`), in
    the queue's slot (layout step 8; a reading merges the queues of `PARTS`)."""
    return f"{PREFIX}{{q:{queue}}}:{name}"


#: The lists a process leaves a queue's jobs on for any reconciler to file, by the name each
#: queue's is called (layout step 9: `cogworker:{q:NAME}:unsettled`, ...): settlements
#: handed over at a stop, repeat orphans and repeat hand-backs parked for dead.
LEFT_LIST_NAMES = ("unsettled", "repeat_orphans", "repeat_handbacks")


def left_list(name: str, queue: str) -> str:
    """A queue's list of jobs left for a reconciler (`name`, one of `LEFT_LIST_NAMES`), in
    the queue's slot (layout step 9; a reconciler reads the queues of `PARTS`)."""
    return f"{PREFIX}{{q:{queue}}}:{name}"


def unsettled(queue: str) -> str:
    """The settlements of a queue's jobs that stopping processes handed over."""
    return left_list("unsettled", queue)


def repeat_orphans(queue: str) -> str:
    """A queue's jobs orphaned too many times, waiting to be filed in its dead set."""
    return left_list("repeat_orphans", queue)


def repeat_handbacks(queue: str) -> str:
    """A queue's jobs handed back unfinished at too many stops, waiting likewise."""
    return left_list("repeat_handbacks", queue)


def located(queue: str) -> str:
    """A queue's jid index of its scheduled, retry and dead sets (`adapters.located`)."""
    return f"{PREFIX}{{q:{queue}}}:located"


def located_of(set_key: str) -> str:
    """The jid index of the queue whose scheduled, retry or dead set is `set_key`."""
    return set_key.rpartition(":")[0] + ":located"


def schedule(queue: str) -> str:
    """A queue's scheduled jobs, scored by when they are due."""
    return sorted_set("schedule", queue)


def retry(queue: str) -> str:
    """A queue's jobs waiting to retry, scored by when they are due."""
    return sorted_set("retry", queue)


def dead(queue: str) -> str:
    """A queue's dead jobs, scored by when they died; trimmed per queue."""
    return sorted_set("dead", queue)


def queue(name: str) -> str:
    """The list holding a queue's jobs (pushed on the left, taken from the right)."""
    return QUEUE_HEAD + name + QUEUE_TAIL


def queue_of(key: str) -> str:
    """The name of the queue whose list is `key` (a name `queue` gave)."""
    return key[len(QUEUE_HEAD) : len(key) - len(QUEUE_TAIL)]


def no_lock(queue: str) -> str:
    """A key name never written: a script's placeholder for a key a call doesn't touch (a
    lock a job doesn't have, the metrics of a run not counted), in the slot of the queue
    the script works on (layout step 6: a script names keys of one slot only)."""
    return f"{PREFIX}{{q:{queue}}}:no-lock"


def queue_paused(name: str) -> str:
    """A queue's pause flag: a string key that exists while the queue is paused.

    Named in the layout of docs/redis-cluster.md (the queue's slot, hash tag
    `{q:NAME}`) from the start: the fetch script reads it next to the queue.
    """
    return f"{PREFIX}{{q:{name}}}:paused"


def _owned_by_process(identity: str) -> str:
    """The start of every key a process owns: its hash tag `{p:IDENTITY}` (layout step 7)."""
    return f"{PREFIX}{{p:{identity}}}:"


#: Where a process of a release before layout step 7 beats: `cogworker migrate` reads it
#: too, to know such workers have stopped.
LEGACY_PROCESS_PREFIX = PREFIX + "process:"


def process(identity: str) -> str:
    """A process's heartbeat hash."""
    return _owned_by_process(identity) + "process"


def workers(identity: str) -> str:
    """What each of a process's threads is running now."""
    return _owned_by_process(identity) + "workers"


def memory_history(identity: str) -> str:
    """A process's RSS per 15-minute slot over the last 24 hours."""
    return _owned_by_process(identity) + "memory"


def suspect(identity: str) -> str:
    """When a reconciler first found a process's beat too old (its node's clock), until the
    process beats again or is judged gone (`lua/judge_gone.lua`)."""
    return _owned_by_process(identity) + "suspect"


def in_progress(queue: str, identity: str) -> str:
    """The jobs of `queue` a process has taken and not yet settled (reliable fetch)."""
    return QUEUE_HEAD + queue + IN_PROGRESS_TAIL + identity


def in_progress_owner(key: str) -> tuple[str, str]:
    """The queue and the process of an in-progress list (a name `in_progress` gave): the
    process is what follows the last `IN_PROGRESS_TAIL` (an identity never holds it)."""
    queue, _, identity = key[len(QUEUE_HEAD) :].rpartition(IN_PROGRESS_TAIL)
    return queue, identity


def process_queues(identity: str) -> str:
    """The queues a process has in-progress lists on: added before its first fetch from
    each, kept until recovery or its clean exit has emptied them."""
    return _owned_by_process(identity) + "queues"


def signal(identity: str) -> str:
    """Commands (quiet, resume, stop) waiting for a process's next heartbeat."""
    return _owned_by_process(identity) + "signal"


# --- a job's own records, in its queue's slot (layout step 5) ---
# A reader knowing only the jid finds the queue through the jid index (`adapters.job_records`).


def orphanings(queue: str, jid: str) -> str:
    """How many times a job's process died while running it."""
    return f"{PREFIX}{{q:{queue}}}:orphanings:{jid}"


def handbacks(queue: str, jid: str) -> str:
    """How many times a stopping process handed a job back while it still ran."""
    return f"{PREFIX}{{q:{queue}}}:handbacks:{jid}"


def cancel_mark(queue: str, jid: str) -> str:
    """Set when a cancel was sent to the process running a job: a recovery of that run
    (its process died before the cancel reached it) ends it as cancelled."""
    return f"{PREFIX}{{q:{queue}}}:cancelled:{jid}"


def hard_timeout_mark(queue: str, jid: str) -> str:
    """Set by a process's pulse that ended it, frozen in a job past its hard time limit:
    the recovery of that run files it as timed out ("started timeout grace")."""
    return f"{PREFIX}{{q:{queue}}}:hard_timeout:{jid}"


def job_attempts(queue: str, jid: str) -> str:
    """A job's failed attempts, newest first."""
    return f"{PREFIX}{{q:{queue}}}:attempts:{jid}"


def history(queue: str, jid: str) -> str:
    """A job's runs, newest first."""
    return f"{PREFIX}{{q:{queue}}}:history:{jid}"


def class_history(queue: str, class_name: str) -> str:
    """The latest runs of one job class on one queue, newest first, in the queue's slot
    (`tracking.class_history` merges the queues')."""
    return f"{PREFIX}{{q:{queue}}}:class_history:{class_name}"


def status(queue: str, jid: str) -> str:
    """A tracked job's status hash."""
    return f"{PREFIX}{{q:{queue}}}:status:{jid}"


def stat(queue: str, name: str, day: str | None = None) -> str:
    """A queue's counter (`processed`, `failed`, `cancelled`, `expired`), in total or for
    one UTC day (`YYYY-MM-DD`), in the queue's slot (`adapters/counters.py` sums them)."""
    total = f"{PREFIX}{{q:{queue}}}:stat:{name}"
    return f"{total}:{day}" if day else total


# --- per-class metrics (adapters/class_metrics.py), in their queue's slot ---


def _metrics(queue: str) -> str:
    return f"{PREFIX}{{q:{queue}}}:metrics:"


def metrics_minute(queue: str, class_name: str, minute: int) -> str:
    """A class's runs on a queue in one minute (since the epoch): a tally hash."""
    return f"{_metrics(queue)}{class_name}:m:{minute}"


def metrics_hour(queue: str, class_name: str, hour: int) -> str:
    """A class's runs on a queue in one hour (since the epoch): a tally hash."""
    return f"{_metrics(queue)}{class_name}:h:{hour}"


def metrics_total(queue: str, class_name: str) -> str:
    """A class's runs on a queue since it last started running there: a tally hash."""
    return f"{_metrics(queue)}{class_name}:total"


def metrics_classes(queue: str) -> str:
    """The classes that ran on a queue, scored by their last run's time."""
    return _metrics(queue) + "classes"


# --- job results (adapters/results.py, adapters/jid_index.py) ---

#: The jid index: `cogworker:jid:J` holds the name of the queue whose slot keeps J's records.
JID_INDEX_PREFIX = PREFIX + "jid:"


def result(queue: str, jid: str) -> str:
    """A job's kept result: a list of one record (`domain.results`), in its queue's slot."""
    return f"{PREFIX}{{q:{queue}}}:result:{jid}"


def jid_index(jid: str) -> str:
    """The queue of a job's records, by jid: a global string key, written by single-key
    commands only (docs/redis-cluster.md, "The jid index")."""
    return JID_INDEX_PREFIX + jid


# --- periodic jobs (adapters/periodic_store.py) ---

#: The schedule: periodic job name -> JSON of its entry (`domain.cron.ScheduleEntry`):
#: name, cron, tz, class, queue, retry, args, added_at, last_tick, last_run, last_jid, next_run.
#: It and its epoch share the `{periodic}` hash tag: one slot on Redis Cluster (layout step 1).
PERIODIC_SCHEDULE = PREFIX + "{periodic}:schedule"
#: A token written when the schedule is first stored: Redis losing its data loses it too.
PERIODIC_EPOCH = PREFIX + "{periodic}:epoch"


def unique_lock(queue: str, name: str) -> str:
    """The unique lock `name` (`domain.unique.lock_name`, or a caller's jid's) of a job on
    `queue`: the jid holding it, with a TTL; in the queue's slot (layout step 6)."""
    return f"{PREFIX}{{q:{queue}}}:unique:{name}"


def periodic_running(queue: str, name: str) -> str:
    """The running lock of the periodic job `name`, whose runs go to `queue`: the jid of
    its run in flight, with a TTL; in the queue's slot (layout step 6)."""
    return f"{PREFIX}{{q:{queue}}}:periodic:running:{name}"


def periodic_tick(queue: str, name: str, at: float) -> str:
    """The claim of one tick of the periodic job `name`, whose runs go to `queue` (the jid
    it enqueued, or "skipped"/"duplicate"), with a TTL; in the queue's slot, with the run's
    locks and list (phase g: no layout step, see docs/redis-cluster.md)."""
    return f"{PREFIX}{{q:{queue}}}:periodic:tick:{name}:{at:.0f}"


# --- per-key limits (adapters/limit_store.py), in their queue's slot ---

#: The registry of limit keys used lately, for the dashboard: a sorted set of
#: JSON (queue, kind, name, key, max, per) scored by when a worker last used
#: it.  Global: written only by single-key commands, and rebuilt as jobs run.
LIMITS = PREFIX + "limits"


def limit(queue: str, kind: str, name: str, key: str) -> str:
    """A per-key limit's sorted set on a queue: the jids holding a place (concurrency),
    or the starts within the window (rate)."""
    return f"{PREFIX}{{q:{queue}}}:limit:{kind}:{name}:{key}"


def limit_waiting(queue: str, kind: str, name: str, key: str) -> str:
    """The jobs a per-key limit on a queue refused lately, scored by the refusal's time."""
    return f"{PREFIX}{{q:{queue}}}:limit_waiting:{kind}:{name}:{key}"


# --- batches (adapters/batch_store.py): a batch's keys in its own slot {b:BID} ---

#: Every batch by its opening time (a sorted set written by single-key commands, for the
#: dashboard's list; a member whose hash has expired is dropped when read).
BATCHES = PREFIX + "batches"


def batch(bid: str) -> str:
    """A batch's hash: opening time, closed, total, finals by outcome, callbacks, fired."""
    return f"{PREFIX}{{b:{bid}}}:batch"


def batch_members(bid: str) -> str:
    """The jids of a batch's members."""
    return f"{PREFIX}{{b:{bid}}}:jids"


def batch_settled(bid: str) -> str:
    """The jids of a batch's members that reached a final outcome (counted once each)."""
    return f"{PREFIX}{{b:{bid}}}:settled"


def batch_events(queue: str) -> str:
    """Batch members' final outcomes (and closings) on a queue, waiting to be folded
    into their batches: appended in the settling script's step, in the queue's slot."""
    return f"{PREFIX}{{q:{queue}}}:batch_events"


def batch_callback_mark(queue: str, jid: str) -> str:
    """The marker that a batch's callback `jid` was pushed onto `queue`: in the slot of
    the queue's list."""
    return f"{QUEUE_HEAD}{queue}{QUEUE_TAIL}:batch_callback:{jid}"
