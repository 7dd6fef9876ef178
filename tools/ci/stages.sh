# Sourced by tools/test.sh: runs each stage of a test run, timed, and prints every stage's
# time at the end, also when a stage fails (CI's budget is wall-clock time: a run that does
# not say where its minutes went cannot be kept inside it).
#   ordo_stage NAME COMMAND [ARGS...]

ORDO_STAGE_TIMES=()
ORDO_STAGE_START=$SECONDS

ordo_stage() {
  local name="$1" start=$SECONDS rc=0
  shift
  echo "== stage $name" >&2
  # A subshell outside any || list, so that `set -e` holds inside the stage's shell functions.
  set +e
  (set -e; "$@")
  rc=$?
  set -e
  ORDO_STAGE_TIMES+=("$(printf '%-8s %5d s%s' "$name" $((SECONDS - start)) "$([ $rc -eq 0 ] || echo "  FAILED (exit $rc)")")")
  return $rc
}

ordo_stage_report() {
  local total=$((SECONDS - ORDO_STAGE_START))
  echo "== stage times"
  printf '%s\n' "${ORDO_STAGE_TIMES[@]}"
  printf '%-8s %5d s (%d min %d s)\n' total "$total" $((total / 60)) $((total % 60))
}
trap ordo_stage_report EXIT
