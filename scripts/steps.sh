# Sourced by scripts/test.sh: runs its steps one after another, each even when one before it
# failed (an 18-minute run that stops at its first failure hides what the rest would say),
# and says at the end which failed and which never ran.
#
#   run_step NAME COMMAND...     # print NAME, run COMMAND, note NAME if it failed
#   skip_steps_after_failure NAME...   # if a step failed: name these as not run, exit 1
#   report_steps                 # exit status 1, with the failed steps listed, if any failed
# shellcheck shell=bash

failed_steps=()

run_step() {
  local name=$1
  shift
  echo "== $name"
  if ! "$@"; then
    failed_steps+=("$name")
    echo "== FAILED: $name"
  fi
}

skip_steps_after_failure() {
  if [ "${#failed_steps[@]}" -eq 0 ]; then
    return 0
  fi
  echo "== not run, as a step before failed:"
  printf '   - %s\n' "$@"
  report_steps
}

report_steps() {
  if [ "${#failed_steps[@]}" -eq 0 ]; then
    return 0
  fi
  echo "== failed:"
  printf '   - %s\n' "${failed_steps[@]}"
  return 1
}
