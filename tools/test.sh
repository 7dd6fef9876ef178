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
