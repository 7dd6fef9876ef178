#!/usr/bin/env bash
# Builds ordo with sanitizers (clang-14) and runs the tests under them (README, "Reliability").
#   bash tools/sanitize.sh [asan|tsan|all] [ctest options...]
#     asan  AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan; the whole ctest
#           suite (ORDO_ASAN_TESTS=REGEX runs only the tests matching it: CI's subset)
#     tsan  ThreadSanitizer build in build-tsan (only the engine tests and the CLI); the
#           tests that run threads: one Translator shared by threads, --inter-threads workers
#           (library and CLI), intra-op threads, SentencePiece from several threads and its
#           trainer (ORDO_TSAN_TESTS=REGEX overrides the selection)
#     all   both (default)
#   ORDO_JOBS  parallel compile jobs (default: nproc); ORDO_SANITIZE_DIR  where the build
#   folders go (default: the source tree)
# Reports fail the test that caused them. Suppressions, each with its reason, are in
# tools/sanitizers/*.supp. The SentencePiece shim is never instrumented (its own link-map
# namespace cannot reach the sanitizer runtime; see src/text/sentencepiece_shim.h).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/lib/deps.sh"
ordo_install_dependencies "${ORDO_SANITIZER_PACKAGES[@]}"
mode="${1:-all}"
[ $# -gt 0 ] && shift
jobs="${ORDO_JOBS:-$(nproc)}"
dir="${ORDO_SANITIZE_DIR:-$root}"
supp="$root/tools/sanitizers"
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

configure() {  # configure BUILD_DIR FLAGS [cmake options...]
  local build="$1" flags="$2"; shift 2
  cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS="$flags -fno-omit-frame-pointer" -DORDO_CLI_LAUNCHER=OFF "$@" >&2
}

# ORDO_CLI_LAUNCHER=OFF: `ordo` as one executable (CMakeLists.txt says why).
export LLVM_SYMBOLIZER_PATH="${LLVM_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || true)}"

run_asan() {
  local build="$dir/build-asan" start=$SECONDS
  configure "$build" "-fsanitize=address,undefined -fno-sanitize-recover=all" -DORDO_BUILD_TESTS=ON -DORDO_BUILD_TOOLS=ON
  cmake --build "$build" -j "$jobs" >&2
  echo "sanitize: asan build $((SECONDS - start)) s" >&2
  start=$SECONDS
  local filter=()
  if [ -n "${ORDO_ASAN_TESTS:-}" ]; then filter=(-R "$ORDO_ASAN_TESTS"); fi
  ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp" \
    ctest --test-dir "$build" --output-on-failure -j "$jobs" "${filter[@]}" "$@"
  echo "sanitize: asan tests $((SECONDS - start)) s" >&2
}

run_tsan() {
  local build="$dir/build-tsan" start=$SECONDS
  configure "$build" "-fsanitize=thread" -DORDO_BUILD_TESTS=ON -DORDO_BUILD_TOOLS=ON
  cmake --build "$build" -j "$jobs" --target ordo_engine_tests ordo_cli ordo_sentencepiece >&2
  echo "sanitize: tsan build $((SECONDS - start)) s" >&2
  start=$SECONDS
  local tests="${ORDO_TSAN_TESTS:-SentencePieceIsolation|ParallelKernels|Translator\.(Concurrent|BatchingAndInterThreads)|Cli\.SpeedOptions|ComputeTypes\.Float32ResultsDoNotDependOnThreads}"
  TSAN_OPTIONS="suppressions=$supp/tsan.supp:second_deadlock_stack=1:history_size=4${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    ctest --test-dir "$build" --output-on-failure -j 1 -R "$tests" "$@"
  echo "sanitize: tsan tests $((SECONDS - start)) s" >&2
}

case "$mode" in
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  all) run_asan "$@"; run_tsan "$@" ;;
  *) echo "usage: $0 [asan|tsan|all] [ctest options...]" >&2; exit 2 ;;
esac
