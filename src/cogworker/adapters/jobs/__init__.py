"""Moving jobs in Redis, one module per step of a job's way:

    enqueue → fetch → run → settle → recover

`enqueue` pushes jobs onto queues, now or when due; `fetch` takes them into
a process's in-progress list; `run` writes what a run's start needs (its
locks, its "working" mark); `settle` writes how a run ended; `handover`
passes unwritten settlements on when a process stops; `recover` brings a
gone process's jobs back and files repeat orphans in dead.

Each move is one script (or one pipeline of scripts) that first checks the
job is still where the caller left it, so a repeated or late call can't
duplicate or lose a job.  The stores decide nothing: what to write and
where comes from the caller (`domain.settlement` for a run's end).
"""
