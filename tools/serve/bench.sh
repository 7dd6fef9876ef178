#!/usr/bin/env bash
# Load benchmark of `ordo serve` (README "Serving"): requests/s and p50/p95/p99 latency at 1, 8
# and 64 concurrent clients, each request one newstest2014 sentence (wrk, closed loop), for the
# bundled en-de model and the Marian 6+6 workload model of ordo-bench; one replica (2 threads,
# 2 batches at once) and two replicas (1 thread each) behind HAProxy (tools/serve/haproxy.cfg);
# and the ratio of served throughput at 64 clients to offline `ordo translate` on the same
# sentences with the same threads. Needs wrk and haproxy (Debian packages; not for tests).
#
#   bash tools/serve/bench.sh                   # ~6 minutes
#   DURATION=10 MODELS=bundled bash tools/serve/bench.sh
#
#   DURATION   seconds per cell (default 15)   LINES    newstest lines used (default 150)
#   MODELS     "bundled workload" (default)    CLIENTS  "1 8 64" (default)
#   DATA       shared data folder (default ../shared/data)   WORK  scratch (default runs/serve-bench)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
duration="${DURATION:-15}"
lines="${LINES:-150}"
models="${MODELS:-bundled workload}"
clients="${CLIENTS:-1 8 64}"
data="${DATA:-$root/../shared/data}"
work="${WORK:-$root/runs/serve-bench}"
base_port="${BASE_PORT:-18500}"
source "$root/tools/lib/deps.sh"
ordo_install_dependencies "${ORDO_BENCH_PACKAGES[@]}"
mkdir -p "$work"
sentences="$work/newstest2014.en.$lines"
head -n "$lines" "$data/newstest/newstest2014.en" > "$sentences"
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

start_server() {  # port, model dir, threads, inter-threads
  "$build/ordo" serve --port "$1" --model "$2" --threads "$3" --inter-threads "$4" > "$work/serve-$1.log" 2>&1 &
  pids+=($!)
  wait_ready "http://127.0.0.1:$1"
}

stop_all() { cleanup; pids=(); }

# wrk stops at its deadline but the server still answers what it was sent: wait until every
# replica is idle before the next cell (bounded 300 s).
wait_idle() {
  for port in "$@"; do
    for _ in $(seq 1 3000); do
      busy=$(curl -s "http://127.0.0.1:$port/metrics" | sed -n 's/^ordo_http_requests_in_flight \(.*\)/\1/p')
      [ "${busy:-0}" = 0 ] && break
      sleep 0.1
    done
  done
}

run_wrk() {  # url, clients, seconds -> ORDO_RESULT line
  local threads=$(( $2 < 2 ? 1 : 2 ))
  wrk -t "$threads" -c "$2" -d "${3}s" --timeout 120s -s "$root/tools/serve/wrk_translate.lua" "$1" \
    | grep ORDO_RESULT || echo "ORDO_RESULT requests=0 rps=0 p50_ms=- p95_ms=- p99_ms=- errors=?"
}

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<< "$2"; }

results=()
for name in $models; do
  case "$name" in
    bundled)
      dir="$root/models/en-de"; export ORDO_BENCH_API=libre; offline_opts=""; label="bundled en-de" ;;
    workload)
      dir=$("$build/ordo-bench" --model-only --work "$work")
      # The random-weight model never learned to stop: 64 tokens at most, as in ordo-bench.
      export ORDO_BENCH_API=v1 ORDO_BENCH_MODEL=marian-6x6-d512 ORDO_BENCH_OPTIONS=', "max_new_tokens": 64'
      offline_opts="--max-length 64"; label="workload 6+6 d512" ;;
    *) echo "serve bench: unknown model $name" >&2; exit 1 ;;
  esac
  export ORDO_BENCH_SENTENCES="$sentences"

  # Offline: the same sentences through `ordo translate`, the same two cores.
  start=$(date +%s.%N)
  "$build/ordo" translate -q -m "$dir" -i "$sentences" -o /dev/null --threads 2 --inter-threads 2 $offline_opts
  offline=$(echo "$lines / ($(date +%s.%N) - $start)" | bc -l)
  printf '%s: offline ordo translate: %.2f sentences/s\n' "$label" "$offline" >&2

  for setup in "1 replica" "2 replicas"; do
    if [ "$setup" = "1 replica" ]; then
      start_server "$base_port" "$dir" 2 2
      url="http://127.0.0.1:$base_port"
      ports="$base_port"
    else
      start_server $((base_port + 1)) "$dir" 1 1
      start_server $((base_port + 2)) "$dir" 1 1
      ORDO_HAPROXY_BIND="127.0.0.1:$((base_port + 3))" ORDO_REPLICA1="127.0.0.1:$((base_port + 1))" \
        ORDO_REPLICA2="127.0.0.1:$((base_port + 2))" haproxy -f "$root/tools/serve/haproxy.cfg" -db \
        > "$work/haproxy.log" 2>&1 &
      pids+=($!)
      url="http://127.0.0.1:$((base_port + 3))"
      ports="$((base_port + 1)) $((base_port + 2))"
      wait_ready "$url"
      sleep 2  # both replicas pass their health check
    fi
    run_wrk "$url" 16 2 > /dev/null  # warm-up: oneDNN kernels for the batch shapes
    wait_idle $ports
    for c in $clients; do
      r=$(run_wrk "$url" "$c" "$duration")
      wait_idle $ports
      rps=$(field rps "$r")
      ratio=$(echo "$rps / $offline" | bc -l)
      results+=("| $label | $setup | $c | $(printf %.2f "$rps") | $(field p50_ms "$r") | $(field p95_ms "$r") | $(field p99_ms "$r") | $(field errors "$r") | $(printf %.2f "$ratio") |")
      printf '%s, %s, %s clients: %s\n' "$label" "$setup" "$c" "$r" >&2
    done
    stop_all
  done
  results+=("| $label | offline \`ordo translate\` | - | $(printf %.2f "$offline") | | | | | 1.00 |")
done

echo "| model | setup | clients | requests/s | p50 ms | p95 ms | p99 ms | errors | / offline |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${results[@]}"
