"""An APP whose module configures the root logger itself, as an app's settings might: a
worker must leave that configuration alone."""

from __future__ import annotations

import logging
import sys

from tests.app.jobs import fast_config

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="OWN %(levelname)s %(message)s")

config = fast_config
