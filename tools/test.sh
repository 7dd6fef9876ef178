#!/usr/bin/env bash
# Quick start, step 2: install what is missing, build everything, run all tests.
#   bash tools/test.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/lib/deps.sh"
ordo_install_dependencies
ordo_build "$root" -DORDO_BUILD_TESTS=ON
build="${ORDO_BUILD_DIR:-$root/build}"
ctest --test-dir "$build" --output-on-failure -j "${ORDO_JOBS:-$(nproc)}"
# Then the same suite under AddressSanitizer + UBSan, the threaded tests under ThreadSanitizer,
# and each fuzz harness for 60 s (README, "Reliability"; ~25 min on 2 cores from a cold
# ccache). ORDO_CI_SANITIZERS=0 skips this stage.
if [ "${ORDO_CI_SANITIZERS:-1}" != 0 ]; then
  bash "$root/tools/sanitize.sh" all
  bash "$root/tools/fuzz.sh" "${ORDO_CI_FUZZ_SECONDS:-60}"
fi
