#!/usr/bin/env bash
# Quick start, step 2, and CI (.ci/run): install what is missing, build everything, run every
# test. Stages, each timed (the times are printed at the end, also when a stage fails):
#   build  gcc Release build of everything in build/ (ORDO_BUILD_DIR)
#   suite  ctest, every label: unit, integration, slow
#   asan   clang ASan + UBSan build of what the unit and integration tests need (build-asan/),
#          and those tests (tools/ci/sanitize.sh asan)
#   tsan   ThreadSanitizer build of the threaded tests (build-tsan/), and those tests
#   fuzz   each libFuzzer harness for ORDO_CI_FUZZ_SECONDS (default 45), two at a time
#          (tools/ci/fuzz.sh)
# ORDO_CI_SANITIZERS=0 stops after the suite. docs/reliability.md has each stage's cost on
# 2 cores and the full sanitizer run (the slow label too).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/lib/deps.sh"
source "$root/tools/ci/stages.sh"
sanitizers="${ORDO_CI_SANITIZERS:-1}"
extra=("${ORDO_TEST_PACKAGES[@]}")
if [ "$sanitizers" != 0 ]; then extra+=("${ORDO_SANITIZER_PACKAGES[@]}"); fi
# Node.js runs the real DeepL and OpenAI clients (tests/faces/deepl_node/, openai_node/): Debian's,
# unless one is there.
if ! command -v npm >/dev/null; then extra+=(nodejs npm); fi
ordo_stage install ordo_install_dependencies "${extra[@]}"
# The clients' exact versions from their lock files, from the npm registry (test tooling only).
ordo_npm_ci() {
  for face in deepl_node openai_node; do
    npm ci --prefix "$root/tests/faces/$face" --no-audit --no-fund --loglevel=error
  done
}
ordo_stage npm ordo_npm_ci
ordo_stage build ordo_build "$root" -DORDO_BUILD_TESTS=ON
build="${ORDO_BUILD_DIR:-$root/build}"
ordo_stage suite ctest --test-dir "$build" --output-on-failure -j "${ORDO_JOBS:-$(nproc)}"
if [ "$sanitizers" != 0 ]; then
  ordo_stage asan bash "$root/tools/ci/sanitize.sh" asan
  ordo_stage tsan bash "$root/tools/ci/sanitize.sh" tsan
  ordo_stage fuzz bash "$root/tools/ci/fuzz.sh" "${ORDO_CI_FUZZ_SECONDS:-45}"
fi
