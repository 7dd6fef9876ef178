#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang-14 (AddressSanitizer + UBSan +
# libFuzzer) and runs each for a bounded time (docs/reliability.md).
#   bash tools/ci/fuzz.sh [SECONDS [HARNESS...]]     default: 60 s each, every harness
#   harnesses: ORDO_FUZZ_HARNESSES in tests/fuzz/CMakeLists.txt (every one by default)
#   They run ORDO_FUZZ_PARALLEL at a time (default: nproc), each on one core.
# Seeds come from tests/data (and tests/fuzz/corpus); each harness's growing corpus is kept in
# build-fuzz/corpus/<harness> between runs. A crash stops that harness, leaves its input in
# build-fuzz/artifacts/<harness>/ and makes the script fail; once fixed, check the input in as
# tests/fuzz/regressions/<harness>/<name> (ctest replays it in every build).
#   ORDO_FUZZ_DIR  build folder (default build-fuzz)   ORDO_JOBS  compile jobs (default nproc)
#   ORDO_FUZZ_FLAGS  extra libFuzzer flags (e.g. -jobs=2 -workers=2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/tools/lib/deps.sh"
ordo_install_dependencies "${ORDO_SANITIZER_PACKAGES[@]}"
seconds="${1:-60}"
[ $# -gt 0 ] && shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] ||
  read -r -a harnesses <<< "$(sed -n 's/^set(ORDO_FUZZ_HARNESSES \(.*\))$/\1/p' "$root/tests/fuzz/CMakeLists.txt")"
parallel="${ORDO_FUZZ_PARALLEL:-$(nproc)}"
build="${ORDO_FUZZ_DIR:-$root/build-fuzz}"
launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" \
  -DORDO_BUILD_FUZZERS=ON -DORDO_BUILD_TESTS=OFF -DORDO_BUILD_TOOLS=OFF >&2
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j "${ORDO_JOBS:-$(nproc)}" --target "${targets[@]}" ordo_sentencepiece >&2

data="$root/tests/data"
seed() {  # seed HARNESS DIR: copies the harness's seed inputs into DIR
  local h="$1" out="$2" f
  mkdir -p "$out"
  case "$h" in
    safetensors) cp "$root"/tests/fuzz/corpus/safetensors/* "$out"/ ;;
    model_config)
      for f in "$data"/hf/*/*config.json "$data"/hf/*/special_tokens_map.json "$data"/tokenizers/*/*.json; do
        cp "$f" "$out/$(basename "$(dirname "$f")")_$(basename "$f")"
      done ;;
    vocab) cp "$root"/tests/fuzz/corpus/vocab/* "$data"/hf/m2m100/vocab.json "$out"/ ;;
    tokenizers)  # one sentence per seed
      head -n 40 "$data"/samples/multi30k_val100.en | split -l 1 - "$out/en_"
      head -n 40 "$data"/samples/multi30k_val100.de | split -l 1 - "$out/de_"
      printf '>>por<< Hello world.' > "$out/language_code"
      printf 'a </s> b <unk> c <pad>' > "$out/special_tokens" ;;
    cli_readers)
      head -n 20 "$data"/samples/multi30k_val100.en > "$out/lines"
      head -c 3000 "$data"/samples/dialogsum_dev30.jsonl > "$out/jsonl"
      printf 'first paragraph\nstill first\n\n \t\nsecond\r\n\r\nthird' > "$out/paragraphs" ;;
    server_requests)
      cp "$root"/tests/fuzz/corpus/server_requests/* "$out"/
      head -n 10 "$data"/samples/multi30k_val100.en > "$out/lines" ;;
    *) cp "$root"/tests/fuzz/corpus/"$h"/* "$out"/ ;;  # a harness whose seeds are all in corpus/
  esac
}

export LLVM_SYMBOLIZER_PATH="${LLVM_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || true)}"
export ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fuzz_one() {  # fuzz_one HARNESS: runs it for $seconds s; writes its summary line to $build/summary-HARNESS
  local h="$1" corpus="$build/corpus/$1" seeds="$build/seeds/$1" artifacts="$build/artifacts/$1"
  local log="$build/fuzz-$1.log" rc runs
  rm -rf "$seeds"
  seed "$h" "$seeds"
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz: $h for $seconds s (log $log)" >&2
  # -max_len: big enough for the seeds' interesting parts, small enough to stay fast.
  # -rss_limit_mb/-malloc_limit_mb: a parser that allocates more than 2 GB for a small input is a bug.
  set +e
  "$build/fuzz/fuzz_$h" "$corpus" "$seeds" -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=2560 -malloc_limit_mb=2048 -timeout=25 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" ${ORDO_FUZZ_FLAGS:-} > "$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
  if [ $rc -ne 0 ]; then
    echo "$h: FAILED after $runs executions (exit $rc); input in $artifacts/, see $log" > "$build/summary-$h"
    grep -m 3 -E 'ERROR|runtime error|fuzz invariant|uncaught|deadly' "$log" >&2 || true
  else
    echo "$h: $runs executions in $seconds s, no crash (corpus $(ls "$corpus" | wc -l) inputs)" > "$build/summary-$h"
  fi
}

for h in "${harnesses[@]}"; do
  rm -f "$build/summary-$h"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$h" &
done
wait
status=0
for h in "${harnesses[@]}"; do
  if [ ! -s "$build/summary-$h" ]; then echo "$h: no result (the harness's run ended early)"; status=1; continue; fi
  cat "$build/summary-$h"
  if grep -q FAILED "$build/summary-$h"; then status=1; fi
done
exit $status
