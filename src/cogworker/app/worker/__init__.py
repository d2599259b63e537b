"""The worker runtime: a manager, its processor threads and its housekeeping loops.

Threads of one `cogworker work` process:

* fetcher: takes jobs into this process's in-progress list, as many as there are idle processors;
* processors (``concurrency`` of them): run one job at a time and settle it;
* heartbeat: registers the process, reports what runs, picks up quiet/resume/stop;
* poller: moves due scheduled and retry jobs onto their queues;
* reconciler: settles writes that failed, recovers the jobs of dead processes.
"""
