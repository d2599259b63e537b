"""The functional core: immutable records and the decisions made from them.

Rules of this package (the import guard in CI enforces the first two):

* nothing here does I/O, reads a clock, draws a random number or logs;
  `now`, jitter and random sources come in as parameters;
* nothing here imports the rest of cogworker;
* a decision is a function from records to a record; the shell applies it.
"""
