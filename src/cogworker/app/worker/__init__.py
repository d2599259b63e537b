"""The worker runtime: one `cogworker work` process, its threads and a job's way through them.

A job's way (the module doing each step in brackets):

1. The manager registers the process (``admission``, ``heartbeat``) and
   starts everything below (``manager``).
2. The fetcher takes jobs from the queues into this process's in-progress
   list, as many as there are free fetch slots (``fetcher``, ``slots``),
   once the lease of the last beat holds (``lease``).
3. It hands each fetched job off, decoded and its class loaded: a sync job
   to the queue the processor threads take from, an async one to the event
   loop (``handoff``, ``work_queue``, ``event_loop``).
4. A processor starts it: the lease still held, its per-key limit's place
   taken, its unique lock turned, a tracked job marked working
   (``processor``, ``run_start``, ``limit_gate``, ``status_marks``).
5. It runs the job's own code through the server middleware
   (``running``), under its time limit: the watchdog raises a timeout, a
   cancel raises into it (``watchdog``, ``interrupts``).
6. How the run ended is gathered (``run_ends``, ``run_logs``) and
   ``domain.settlement`` decides what that writes.
7. The settler writes it: an ack or a retry with the acker's next batch,
   anything else at once (``settler``, ``acker``); a write that fails is
   remembered (``pending``) for the reconciler.
8. Housekeeping: the poller moves due scheduled and retry jobs onto their
   queues (``poller``); the reconciler writes what was remembered and
   brings back the jobs of processes gone (``reconciler``, ``left_jobs``);
   the batch mover folds batch events (``batch_mover``); the periodic
   manager enqueues cron jobs (``periodic_manager``, ``periodic_watch``).
9. On stop, running jobs get `shutdown_timeout`, the rest go back to the
   front of their queues, and the presence keys go (``stopping``,
   ``manager``).

What runs in one worker process: the main thread, nine kinds of thread
that ``manager.Manager.start`` spawns, two more for async jobs, and a
companion process (``threading`` names in brackets; a test holds this list
to the names spawned):

* the main thread: waits for a stop, then stops the rest;
* ``concurrency`` processor threads (``processor-0`` ...): steps 4 to 7
  for sync jobs;
* the fetcher (``fetcher``): steps 2 and 3;
* the acker (``acker``): writes acks, retries and working marks in batches;
* the heartbeat (``heartbeat``): the process's presence and its mailbox
  (quiet, resume, stop, cancel);
* the watchdog (``watchdog``): the running jobs' time limits;
* the poller (``poller``), the batch mover (``batch-mover``), the
  reconciler (``reconciler``) and the periodic manager (``periodic``);
* with ``async_concurrency`` above 0, the event loop's thread
  (``event-loop``), where async jobs run steps 4 to 7, and, with
  ``async_block_warning`` above 0, its watch (``loop-watchdog``) saying
  when a job blocked it;
* and beside them, started first, a companion process: the pulse
  (``pulse``, ``pulse_beater``), which keeps the beat fresh while a job
  holds the GIL.
"""
