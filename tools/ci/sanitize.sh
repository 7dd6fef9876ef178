#!/usr/bin/env bash
# Builds ordo with sanitizers (clang-14) and runs the tests under them (docs/reliability.md).
#   bash tools/ci/sanitize.sh [asan|tsan|all] [options for ctest (asan) / the test binary (tsan)]
#     asan  AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan; the ctest labels
#           ORDO_ASAN_LABELS (default unit|integration: CI's stage; "." for the full run that
#           adds the slow label); ORDO_ASAN_TESTS=REGEX runs only the tests matching it
#     tsan  ThreadSanitizer build in build-tsan (the CLI and the engine test files that start
#           threads); the tests that run threads: one Translator shared by threads,
#           --inter-threads workers (library and CLI), intra-op threads, SentencePiece from
#           several threads and its trainer (ORDO_TSAN_TESTS=GTEST_FILTER overrides the selection,
#           ORDO_TSAN_FILES=REGEX the test files built)
#     all   both (default)
#   ORDO_JOBS  parallel compile jobs (default: nproc); ORDO_SANITIZE_DIR  where the build
#   folders go (default: the source tree)
# Reports fail the test that caused them. Suppressions, each with its reason, are in
# tools/ci/sanitizers/*.supp. The SentencePiece shim is never instrumented (its own link-map
# namespace cannot reach the sanitizer runtime; see src/text/sentencepiece_shim.h).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/tools/lib/deps.sh"
ordo_install_dependencies "${ORDO_SANITIZER_PACKAGES[@]}"
mode="${1:-all}"
[ $# -gt 0 ] && shift
jobs="${ORDO_JOBS:-$(nproc)}"
dir="${ORDO_SANITIZE_DIR:-$root}"
supp="$root/tools/ci/sanitizers"
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
  local labels="${ORDO_ASAN_LABELS:-unit|integration}" targets=()
  # The unit and integration tests need the test binaries (the file formats' too: they read
  # hostile files), `ordo` and the fuzz replays, not the
  # benchmark, the evaluator or the load generator; the full run (labels ".") builds everything.
  if [ "$labels" != "." ]; then
    targets=(--target ordo_base_tests ordo_engine_tests ordo_server_tests ordo_file_tests ordo_cli ordo_sentencepiece)
    for h in $(sed -n 's/^set(ORDO_FUZZ_HARNESSES \(.*\))$/\1/p' "$root/tests/fuzz/CMakeLists.txt"); do
      targets+=("fuzz_${h}_replay")
    done
  fi
  cmake --build "$build" -j "$jobs" "${targets[@]}" >&2
  echo "sanitize: asan build $((SECONDS - start)) s" >&2
  start=$SECONDS
  local filter=(-L "$labels")
  if [ -n "${ORDO_ASAN_TESTS:-}" ]; then filter+=(-R "$ORDO_ASAN_TESTS"); fi
  ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
  LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp" \
    ctest --test-dir "$build" --output-on-failure -j "$jobs" "${filter[@]}" "$@"
  echo "sanitize: asan tests $((SECONDS - start)) s" >&2
}

# ThreadSanitizer runs the tests that start threads; the build compiles only the test files that
# hold them (ORDO_ENGINE_TEST_FILES), not the whole engine suite.
tsan_files="translator|parallel_kernels|sentencepiece_isolation|cli|compute_type"
tsan_tests="SentencePieceIsolation.*:ParallelKernels.*:Translator.Concurrent*:Translator.BatchingAndInterThreads*"
tsan_tests+=":Cli.SpeedOptions:ComputeTypes.Float32ResultsDoNotDependOnThreads"

run_tsan() {
  local build="$dir/build-tsan" start=$SECONDS
  configure "$build" "-fsanitize=thread" -DORDO_BUILD_TESTS=ON -DORDO_BUILD_TOOLS=ON \
    -DORDO_ENGINE_TEST_FILES="${ORDO_TSAN_FILES:-$tsan_files}"
  cmake --build "$build" -j "$jobs" --target ordo_engine_tests ordo_cli ordo_sentencepiece >&2
  echo "sanitize: tsan build $((SECONDS - start)) s" >&2
  start=$SECONDS
  TSAN_OPTIONS="suppressions=$supp/tsan.supp:second_deadlock_stack=1:history_size=4${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    "$build/tests/ordo_engine_tests" --gtest_filter="${ORDO_TSAN_TESTS:-$tsan_tests}" "$@"
  echo "sanitize: tsan tests $((SECONDS - start)) s" >&2
}

case "$mode" in
  asan) run_asan "$@" ;;
  tsan) run_tsan "$@" ;;
  all) run_asan "$@"; run_tsan "$@" ;;
  *) echo "usage: $0 [asan|tsan|all] [ctest options...]" >&2; exit 2 ;;
esac
