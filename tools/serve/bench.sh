#!/usr/bin/env bash
# Load benchmark of `ordo serve` (docs/serving.md, "Load"): requests/s and p50/p95/p99 latency at 1, 8
# and 64 concurrent clients, each request one newstest2014 sentence, for the bundled en-de model
# and the Marian 6+6 workload model of ordo-bench; one replica (2 threads, 2 batches at once)
# and two replicas (1 thread each) behind HAProxy (configs/serving/haproxy.cfg); and the ratio of
# served throughput at 64 clients to offline `ordo translate` on the same sentences with the
# same two cores. The load comes from build/ordo-serve-load (a fixed number of requests, see
# tools/serve/load_main.cpp). Needs haproxy (installed by the script; not needed by the tests).
#
# On a machine shared with other work, wall-clock figures move with the neighbours' load; the
# CPU time the servers (and HAProxy) and the offline run used is measured too (/proc/PID/stat),
# and "/ offline, per CPU s" compares sentences per CPU-second, which the neighbours disturb less.
#
#   bash tools/serve/bench.sh                          # ~6 minutes on an idle 2-core machine
#   MODELS=bundled CLIENTS="1 64" bash tools/serve/bench.sh
#
#   MODELS    "bundled workload" (default)     CLIENTS   "1 8 64" (default)
#   PER_CLIENT  requests per client in a cell (default 4 for bundled, 2 for workload; at least 16)
#   DATA      shared data folder (default ../shared/data)   WORK  scratch (default runs/serve-bench)
#
# MODE=latency: the HTTP and batching overhead of a lone client. For each model and intra-op
# thread count (one worker), the first N newstest2014 lines one at a time, each line both
# in-process through the library (the work `ordo serve` does for a POST /translate of one line:
# the translation preset, the line cut into sentences, one batch) and as a LibreTranslate POST
# /translate request from one keep-alive client, the two interleaved line by line
# (tools/serve/library_latency.py --url: the host's drift lands on both alike); one warm-up
# line first. Prints p50/p95 of both, served/library, and the median over the lines of served
# minus library time, with the machine and its load average. ~1 minute per cell at N=200.
# With THREADS 1, the server and the library run on one core (PIN, default 0; PIN=none: where
# the scheduler puts them): the two cores of a virtual machine run at speeds of their own that
# change by the minute, and unpinned the server's thread and the library's land on different
# ones often enough to move the ratio by ±5 %.
#
#   MODE=latency bash tools/serve/bench.sh
#   MODE=latency N=50 THREADS=1 bash tools/serve/bench.sh
#
#   MODELS    "bundled" (default), or model folders translating en->de    THREADS  "1 2" (default)
#   N         lines (default 200)     PIN  the core of the 1-thread cells (default 0; none)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
models="${MODELS:-bundled workload}"
clients="${CLIENTS:-1 8 64}"
data="${DATA:-$root/../shared/data}"
work="${WORK:-$root/runs/serve-bench}"
base_port="${BASE_PORT:-18500}"
mode="${MODE:-load}"
case "$mode" in load | latency) ;; *) echo "serve bench: unknown MODE $mode (load, latency)" >&2; exit 1 ;; esac
source "$root/tools/lib/deps.sh"
[ "$mode" = latency ] || ordo_install_dependencies "${ORDO_BENCH_PACKAGES[@]}"
mkdir -p "$work"
sentences="$work/newstest2014.en.300"
head -n 300 "$data/newstest/newstest2014.en" > "$sentences"
[ -s "$sentences" ] || { echo "serve bench: no $data/newstest/newstest2014.en" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2> /dev/null || true; done; wait 2> /dev/null || true; }
trap cleanup EXIT

wait_ready() {  # url, bounded 120 s
  for _ in $(seq 1 1200); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/ready")" = 200 ]; then return 0; fi
    sleep 0.1
  done
  echo "serve bench: $1 not ready" >&2
  return 1
}

launch=()  # a prefix for the server's and the library's command (MODE=latency: taskset)
start_server() {  # port, model dir, threads, inter-threads
  "${launch[@]}" "$build/ordo" serve --port "$1" --model "$2" --threads "$3" --inter-threads "$4" --timeout 3600 \
    > "$work/serve-$1.log" 2>&1 &
  pids+=($!)
  wait_ready "http://127.0.0.1:$1"
}

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }  # " name=value"

# CPU seconds (user + system) used so far by the processes `pids` (the servers, HAProxy).
cpu_seconds() {
  local ticks=0 hz
  hz=$(getconf CLK_TCK)
  for p in "${pids[@]}"; do
    [ -r "/proc/$p/stat" ] || continue
    ticks=$(( ticks + $(awk '{print $14 + $15}' "/proc/$p/stat") ))
  done
  echo "$ticks / $hz" | bc -l
}

# MODE=latency (see the header): one table, then exit.
latency() {
  local n="${N:-200}" lines="$work/newstest2014.en.latency" rows=() name dir label t url lib served beam
  local load_start
  load_start=$(cut -d' ' -f1-3 /proc/loadavg)
  head -n "$n" "$data/newstest/newstest2014.en" > "$lines"
  for name in ${MODELS:-bundled}; do
    if [ "$name" = bundled ]; then dir="$root/models/en-de"; label="bundled en-de"; else dir="$name"; label=$(basename "$name"); fi
    for t in ${THREADS:-1 2}; do
      launch=()
      if [ "$t" = 1 ] && [ "${PIN:-0}" != none ]; then launch=(taskset -c "${PIN:-0}"); fi
      start_server "$base_port" "$dir" "$t" 1
      url="http://127.0.0.1:$base_port"
      beam=$(curl -s "$url/v1/models" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["models"][0]["default_beam_size"])')
      both=$(PYTHONPATH="$build/python" "${launch[@]}" /usr/bin/python3 "$root/tools/serve/library_latency.py" "$dir" "$t" "$lines" --url "$url")
      lib=$(grep 'side=library' <<< "$both")
      served=$(grep 'side=served' <<< "$both")
      echo "$label, $t threads, library: $lib" >&2
      echo "$label, $t threads, served: $served" >&2
      cleanup
      pids=()
      local cells="| $label | $t$([ ${#launch[@]} -gt 0 ] && echo " (core ${PIN:-0})") | $beam | $(field requests "$lib") ($(field sentences "$lib")) |" p
      for p in p50_ms p95_ms; do cells+=" $(field $p "$lib") |"; done
      for p in p50_ms p95_ms; do cells+=" $(field $p "$served") |"; done
      for p in p50_ms p95_ms; do cells+=" $(printf %.2f "$(echo "$(field $p "$served") / $(field $p "$lib")" | bc -l)") |"; done
      cells+=" $(field added_p50_ms "$served") |"
      rows+=("$cells")
    done
  done
  echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) (family $(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -n 1), model $(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), $(nproc) cores"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average at the start: $load_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| model | threads | beam | lines (sentences) | library p50 ms | library p95 ms | served p50 ms | served p95 ms | served/library p50 | p95 | added per line, median ms |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
}
if [ "$mode" = latency ]; then latency; exit 0; fi

results=()
for name in $models; do
  case "$name" in
    bundled)
      # POST /translate cuts texts into sentences: the offline run does the same.
      dir="$root/models/en-de"; load_opts=(--api libre); offline_opts=(--split-sentences); label="bundled en-de"
      per_client="${PER_CLIENT:-4}" ;;
    workload)
      dir=$("$build/ordo-bench" --model-only --work "$work")
      # The random-weight model never learned to stop: 64 tokens at most, as in ordo-bench.
      load_opts=(--api v1 --model marian-6x6-d512 --max-new-tokens 64); offline_opts=(--max-length 64)
      label="workload 6+6 d512"; per_client="${PER_CLIENT:-2}" ;;
    *) echo "serve bench: unknown model $name" >&2; exit 1 ;;
  esac
  max_clients=0
  for c in $clients; do max_clients=$(( c > max_clients ? c : max_clients )); done
  n_offline=$(( per_client * max_clients > 16 ? per_client * max_clients : 16 ))

  # Offline: the sentences the largest cell sends, through `ordo translate`, the same two cores.
  head -n "$n_offline" "$sentences" > "$work/offline.en"
  TIMEFORMAT='%R %U %S'
  { time "$build/ordo" translate -q -m "$dir" -i "$work/offline.en" -o /dev/null --threads 2 --inter-threads 2 \
      "${offline_opts[@]}"; } 2> "$work/offline.time"
  read -r wall user sys < "$work/offline.time"
  offline=$(echo "$n_offline / $wall" | bc -l)
  offline_cpu=$(echo "$n_offline / ($user + $sys)" | bc -l)
  printf '%s: offline ordo translate, %d sentences: %.2f sentences/s, %.2f per CPU second (%.2f cores busy)\n' \
    "$label" "$n_offline" "$offline" "$offline_cpu" "$(echo "($user + $sys) / $wall" | bc -l)" >&2

  for setup in "1 replica" "2 replicas + HAProxy"; do
    if [ "$setup" = "1 replica" ]; then
      start_server "$base_port" "$dir" 2 2
      url="http://127.0.0.1:$base_port"
    else
      start_server $((base_port + 1)) "$dir" 1 1
      start_server $((base_port + 2)) "$dir" 1 1
      ORDO_HAPROXY_BIND="127.0.0.1:$((base_port + 3))" ORDO_REPLICA1="127.0.0.1:$((base_port + 1))" \
        ORDO_REPLICA2="127.0.0.1:$((base_port + 2))" haproxy -f "$root/configs/serving/haproxy.cfg" -db \
        > "$work/haproxy.log" 2>&1 &
      pids+=($!)
      url="http://127.0.0.1:$((base_port + 3))"
      wait_ready "$url"
      sleep 2  # both replicas pass their first health check
    fi
    for c in $clients; do
      n=$(( per_client * c > 16 ? per_client * c : 16 ))
      # Warm-up (not counted): oneDNN kernels for the batch shapes, from the end of the file.
      "$build/ordo-serve-load" --url "$url" --clients "$c" --requests "$(( c < 16 ? 16 : c ))" \
        --sentences <(tail -n 64 "$sentences") "${load_opts[@]}" > /dev/null || true
      cpu_before=$(cpu_seconds)
      r=$("$build/ordo-serve-load" --url "$url" --clients "$c" --requests "$n" --sentences "$sentences" \
            "${load_opts[@]}" || true)
      cpu=$(echo "$(cpu_seconds) - $cpu_before" | bc -l)
      ok=$(( n - $(field errors "$r") ))
      ratio=$(echo "$(field rps "$r") / $offline" | bc -l)
      cpu_ratio=$(echo "$ok / $cpu / $offline_cpu" | bc -l)
      busy=$(echo "$cpu / $(field seconds "$r")" | bc -l)
      printf '%s, %s, %s clients: %s cpu_s=%.1f\n' "$label" "$setup" "$c" "$r" "$cpu" >&2
      results+=("| $label | $setup | $c | $n | $(field rps "$r") | $(field p50_ms "$r") | $(field p95_ms "$r") | $(field p99_ms "$r") | $(field errors "$r") | $(printf %.2f "$ratio") | $(printf %.2f "$cpu_ratio") | $(printf %.2f "$busy") |")
    done
    cleanup
    pids=()
  done
  results+=("| $label | offline \`ordo translate\` | - | $n_offline | $(printf %.2f "$offline") | | | | | 1.00 | 1.00 | $(printf %.2f "$(echo "($user + $sys) / $wall" | bc -l)") |")
done

echo "| model | setup | clients | requests | requests/s | p50 ms | p95 ms | p99 ms | errors | / offline | / offline, per CPU s | cores busy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${results[@]}"
