"""The fault tests' config with `job_modules` (issue 16 #23): job classes only from two modules."""

from __future__ import annotations

import attrs

from tests.faults.jobs import config

config_with_job_modules = attrs.evolve(
    config, job_modules=("tests.faults.jobs", "tests.faults.jobs_guarded")
)
