"""Periodic (cron) jobs: one enqueue per tick cluster-wide, running locks, catch-up, replace."""
