#!/usr/bin/env bash
# One command for every speed table of docs/benchmarks.md on the machine at hand, ordo beside its
# peers, into one markdown file whose header names the machine once (the tables are only
# comparable with figures from the same machine, measured together). The parts, in order; each
# is skipped with a one-line reason when its peer, data or binary is missing:
#   throughput  the workload table: ordo-bench --peer-python (CTranslate2 at its best, transformers
#               eager, peak RSS, start-up); full 32 sentences median of 3, --quick 8 and one run
#   latency     batch 1, workload and tc-big, float32 and int8, 1 and 2 threads, beams 1 and 4,
#               CTranslate2 at its best (--peer-best); 200 newstest sentences, --quick 20
#   long        LED / LongT5 / Pegasus-X encoder passes against transformers eager (long_inputs.py);
#               --quick: the smallest size, one repeat
#   whisper     Whisper tiny and base against CTranslate2 and whisper.cpp (whisper/bench.py),
#               1 and 2 threads; --quick: its own --quick (tiny, the 60 s clip, one run)
#   serve       single-request latency of `ordo serve` against the library in-process, line by line
#               (MODE=latency tools/serve/bench.sh, the bundled en-de model); 200 lines, --quick 20
# Before each part it waits (at most --load-wait seconds) for a 1-minute load average below 1.5
# and writes the load it started at; the tools' own busy-machine refusals are then overridden.
# It builds nothing (build ordo_cli, ordo-bench, ordo_python and ordo-serve-load first) and must
# run alone on the machine: on the shared project machine, under both locks.
#
#   tools/bench/suite.sh [--quick] [--parts throughput,latency,long,whisper,serve] [--out FILE]
#       [--compute-types L] [--cells L] [--beams L] [--latency-shapes L] [--latency-sentences N]
#       [--whisper-models L] [--long-families L] [--long-sizes L] [--load-wait SECONDS]
#   --compute-types: throughput, latency and whisper; --cells (1, 2, 2x1): throughput and latency,
#   and the thread counts of whisper and serve (2x1 dropped); --beams: throughput and latency.
#   PEERS (/work/peers), CT2_PYLIB ($PEERS/pylib), HF_PYLIB ($PEERS/hf-pylib), DATA (../shared/data),
#   PYTHON (/usr/bin/python3), ORDO_BUILD_DIR (build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
peers="${PEERS:-/work/peers}"
ct2_pylib="${CT2_PYLIB:-$peers/pylib}"
hf_pylib="${HF_PYLIB:-$peers/hf-pylib}"
data="$(realpath -m "${DATA:-$root/../shared/data}")"
python="${PYTHON:-/usr/bin/python3}"

command_line="tools/bench/suite.sh $*"
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
quick=0 parts="throughput,latency,long,whisper,serve" out="" load_wait=600
compute_types="" cells="" beams="" latency_shapes="workload,tc-big" latency_sentences=""
whisper_models="tiny,base" long_families="" long_sizes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --parts) parts="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --compute-types) compute_types="$2"; shift 2 ;;
    --cells) cells="$2"; shift 2 ;;
    --beams) beams="$2"; shift 2 ;;
    --latency-shapes) latency_shapes="$2"; shift 2 ;;
    --latency-sentences) latency_sentences="$2"; shift 2 ;;
    --whisper-models) whisper_models="$2"; shift 2 ;;
    --long-families) long_families="$2"; shift 2 ;;
    --long-sizes) long_sizes="$2"; shift 2 ;;
    --load-wait) load_wait="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "suite.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
for p in ${parts//,/ }; do
  case "$p" in throughput|latency|long|whisper|serve) ;; *) echo "suite.sh: unknown part $p" >&2; exit 2 ;; esac
done

[ -n "$out" ] && out="$(realpath -m "$out")"
cd "$root"  # ordo-bench keeps its models in runs/bench
mkdir -p runs/bench
stamp="$(date -u +%Y-%m-%d-%H%M)"
out="${out:-runs/bench/suite-$stamp.md}"
log="${out%.md}.log"
: > "$log"

# The machine, once: /proc/cpuinfo's first processor.
cpu_field() { sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -n 1; }
isa_flags() {
  local flags have=()
  flags=" $(cpu_field flags) "
  for f in avx2 avx512f avx512_vnni avx512_bf16 amx_tile amx_int8 amx_bf16; do
    [[ "$flags" == *" $f "* ]] && have+=("$f")
  done
  echo "${have[*]:-none of avx2/avx512f/avx512_vnni/avx512_bf16/amx}"
}
load1() { cut -d' ' -f1 /proc/loadavg; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
commit="$(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2> /dev/null)" ]; then
  commit="$commit (with uncommitted changes)"
fi
peer_line() {
  local ct2 hf
  ct2=$(PYTHONPATH="$ct2_pylib" "$python" -c 'import ctranslate2; print(ctranslate2.__version__)' 2> /dev/null) ||
    ct2="missing ($ct2_pylib)"
  hf=$(PYTHONPATH="$hf_pylib" "$python" -c 'import transformers; print(transformers.__version__, "(eager)")' \
    2> /dev/null) || hf="missing ($hf_pylib)"
  echo "CTranslate2 $ct2; transformers $hf"
}
{
  echo "# ordo speed suite, $(date -u '+%Y-%m-%d %H:%M UTC')$([ $quick = 1 ] && echo ', --quick')"
  echo
  echo "- machine: $(cpu_field 'model name'); $(cpu_field vendor_id), family $(cpu_field 'cpu family'), model" \
    "$(cpu_field model); $(isa_flags); $(nproc) cores; $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)"
  echo "- ordo: commit $commit; ORDO_ISA=${ORDO_ISA:-(unset)}"
  echo "- peers: $(peer_line)"
  for name in CTranslate2 whisper.cpp; do
    [ -s "$peers/src/$name/COMMIT" ] && echo "- $name: $(head -n 1 "$peers/src/$name/COMMIT")"
  done
  echo "- command: \`$command_line\`; parts: $parts; progress log: $log"
  echo
} > "$out"

# Waits (bounded) for a quiet machine; prints the part's load line.
wait_quiet() {
  local waited=0
  while awk -v l="$(load1)" 'BEGIN { exit !(l >= 1.5) }' && [ "$waited" -lt "$load_wait" ]; do
    [ "$waited" = 0 ] && echo "suite: load $(loadavg), waiting up to ${load_wait} s for < 1.5" >&2
    sleep 20
    waited=$((waited + 20))
  done
  if awk -v l="$(load1)" 'BEGIN { exit !(l >= 1.5) }'; then
    echo "load average before: $(loadavg) (forced: still >= 1.5 after waiting ${waited} s)"
  else
    echo "load average before: $(loadavg)$([ "$waited" -gt 0 ] && echo " (after waiting ${waited} s)")"
  fi
}

# part TITLE COMMAND...: its stdout into the file (headings two levels down, the tools' own
# machine and peer-build lines dropped: the header names them), its stderr to the log and the terminal.
part() {
  local title="$1" start status=0 body
  shift
  body="$(mktemp)"
  echo "suite: $title" >&2
  {
    echo "## $title"
    echo
    wait_quiet
    echo
    printf "command: \`%s\`\n\n" "$*"
  } >> "$out"
  start=$(date +%s)
  "$@" > "$body" 2> >(tee -a "$log" >&2) || status=$?
  grep -Ev '^(machine|CTranslate2|whisper\.cpp): ' "$body" | sed 's/^\(#\{1,4\}\) /\1## /' |
    awk 'NF { while (blank > 0) { print ""; blank-- } print; next } { blank = 1 }' >> "$out"
  rm -f "$body"
  {
    echo
    if [ "$status" = 0 ]; then echo "(took $(($(date +%s) - start)) s)"; else
      echo "**failed** (exit $status after $(($(date +%s) - start)) s; the log has its messages)"; fi
    echo
  } >> "$out"
}
skip() { printf '## %s\n\nskipped: %s\n\n' "$1" "$2" >> "$out"; echo "suite: $1 skipped: $2" >&2; }
wants() { [[ ",$parts," == *",$1,"* ]]; }
have_ct2() { PYTHONPATH="$ct2_pylib" "$python" -c 'import ctranslate2' 2> /dev/null; }
have_hf() { PYTHONPATH="$hf_pylib" "$python" -c 'import transformers' 2> /dev/null; }
news="$data/newstest/newstest2014.en"

if wants throughput; then
  if [ ! -x "$build/ordo-bench" ]; then skip "Workload throughput" "no $build/ordo-bench (build it)"
  elif ! have_ct2; then skip "Workload throughput" "CTranslate2 does not import from $ct2_pylib"
  else
    args=(--peer-python "$python" --data "$data")
    have_hf && args+=(--hf-path "$hf_pylib")
    [ $quick = 1 ] && args+=(--quick)
    [ -n "$compute_types" ] && args+=(--compute-types "$compute_types")
    [ -n "$cells" ] && args+=(--cells "$cells")
    [ -n "$beams" ] && args+=(--beams "$beams")
    part "Workload throughput, peak RSS and start-up against CTranslate2 and transformers" \
      env PYTHONPATH="$ct2_pylib" "$build/ordo-bench" "${args[@]}"
  fi
fi

if wants latency; then
  if [ ! -x "$build/ordo-bench" ]; then skip "Batch-1 latency" "no $build/ordo-bench (build it)"
  elif [ ! -s "$news" ]; then skip "Batch-1 latency" "no $news (set DATA)"
  elif ! have_ct2; then skip "Batch-1 latency" "CTranslate2 does not import from $ct2_pylib"
  else
    n="${latency_sentences:-$([ $quick = 1 ] && echo 20 || echo 200)}"
    args=(--peer-python "$python" --data "$data" --shape "$latency_shapes" --report latency --peer-best
      --compute-types "${compute_types:-float32,int8}" --cells "${cells:-1,2}" --beams "${beams:-1,4}"
      --latency-sentences "$n")
    part "Batch-1 latency against CTranslate2 (at its best setting)" \
      env PYTHONPATH="$ct2_pylib" "$build/ordo-bench" "${args[@]}"
  fi
fi

if wants long; then
  if [ ! -d "$build/python/ordo" ]; then skip "Long inputs" "no $build/python/ordo (build ordo_python)"
  elif ! have_hf; then skip "Long inputs" "transformers does not import from $hf_pylib"
  else
    args=(--hf-path "$hf_pylib" --ordo-path "$build/python" --force)
    [ -n "$long_families" ] && args+=(--families "$long_families")
    if [ -n "$long_sizes" ]; then args+=(--sizes "$long_sizes"); elif [ $quick = 1 ]; then args+=(--sizes 1024); fi
    [ $quick = 1 ] && args+=(--repeats 1)
    part "Long inputs: one encoder pass against transformers eager" "$python" tools/bench/long_inputs.py "${args[@]}"
  fi
fi

if wants whisper; then
  engines=ordo
  PYTHONPATH="$peers/pylib" "$python" -c 'import ctranslate2' 2> /dev/null && engines+=,ct2  # bench.py's path
  [ -x "$peers/src/whisper.cpp/build/bin/whisper-cli" ] && engines+=,whispercpp
  if [ ! -x "$build/ordo" ]; then skip "Whisper" "no $build/ordo (build ordo_cli)"
  elif [ ! -x "$peers/src/whisper.cpp/build/bin/whisper-quantize" ]; then
    skip "Whisper" "no whisper.cpp in $peers/src/whisper.cpp/build/bin (bench.py needs its converter and quantizer)"
  elif [ "$engines" = ordo ]; then skip "Whisper" "no peer: neither CTranslate2 ($peers/pylib) nor whisper.cpp"
  else
    threads=$(tr ',' '\n' <<< "${cells:-1,2}" | grep -v x | paste -sd, -)
    args=(--peers "$peers" --ordo "$build/ordo" --engines "$engines" --threads "$threads" --force)
    [ -n "$compute_types" ] && args+=(--compute-types "$compute_types")
    if [ $quick = 1 ]; then args+=(--quick); else args+=(--models "$whisper_models"); fi
    part "Whisper against CTranslate2 and whisper.cpp" "$python" tools/bench/whisper/bench.py "${args[@]}"
  fi
fi

if wants serve; then
  if ! grep -q 'MODE=latency' tools/serve/bench.sh; then
    skip "Server latency" "tools/serve/bench.sh has no MODE=latency"
  elif [ ! -x "$build/ordo" ] || [ ! -d "$build/python/ordo" ]; then
    skip "Server latency" "no $build/ordo or $build/python/ordo (build ordo_cli, ordo_python)"
  elif [ ! -s "$news" ]; then skip "Server latency" "no $news (set DATA)"
  else
    serve_env=(MODE=latency DATA="$data" THREADS="$(tr ',' '\n' <<< "${cells:-1,2}" | grep -v x | paste -sd' ' -)")
    [ $quick = 1 ] && serve_env+=(N=20)
    part "Server latency (ordo serve, single requests)" env "${serve_env[@]}" bash tools/serve/bench.sh
  fi
fi

echo "suite: done" >&2
realpath "$out"
