#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, and translate sample sentences with
# the bundled English->German model.
#   bash tools/bootstrap.sh            (then: build/ordo translate --help)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/lib/deps.sh"
ordo_install_dependencies
ordo_build "$root" -DORDO_BUILD_TESTS=OFF
build="${ORDO_BUILD_DIR:-$root/build}"
echo "--- translating with the bundled model (models/en-de):" >&2
printf '%s\n' "A man is riding a bicycle down the street." \
  "Two children are playing in the park." \
  "A woman in a red dress is reading a book." | "$build/ordo" translate
