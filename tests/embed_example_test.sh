#!/usr/bin/env bash
# Installs ordo into a scratch prefix, builds examples/translate against it with
# find_package(ordo), and checks that it translates like the `ordo` command line.
#   embed_example_test.sh SOURCE_DIR BUILD_DIR MODEL_DIR [CXX_COMPILER CXX_FLAGS]
# ORDO_INSTALLED_PREFIX=DIR: use an installed ordo there instead (tests/package: the .deb's /usr).
# The compiler and flags of the build (e.g. sanitizers: an instrumented libordo needs an
# instrumented program) are passed on to the example's build.
set -euo pipefail
source_dir="$1" build_dir="$2" model="$3" cxx="${4:-}" cxx_flags="${5:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="${ORDO_INSTALLED_PREFIX:-$work/prefix}"
[ -n "${ORDO_INSTALLED_PREFIX:-}" ] || cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log"
test -f "$prefix/include/ordo/ordo.h"
# The public headers must not expose LibTorch.
if grep -rE '#include *[<"](torch|ATen|c10)/' "$prefix/include/ordo"; then
  echo "public headers include LibTorch" >&2; exit 1
fi
cmake -S "$source_dir/examples/translate" -B "$work/example" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release ${cxx:+"-DCMAKE_CXX_COMPILER=$cxx"} "-DCMAKE_CXX_FLAGS=$cxx_flags" > "$work/configure.log"
cmake --build "$work/example" > "$work/build.log"
sentence="Where is the train station?"
got="$("$work/example/translate_example" "$model" "$sentence" | cut -f1)"
want="$(echo "$sentence" | "$prefix/bin/ordo" translate -m "$model" --beam-size 4 -q)"
echo "example: $got"
echo "ordo:    $want"
test -n "$got"
test "$got" = "$want"
echo "1 passed, 0 failed"
