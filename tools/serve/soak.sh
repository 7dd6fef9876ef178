#!/usr/bin/env bash
# Soak test of `ordo serve` (docs/operations.md, "Soak"): does it stay flat under steady load?
# Starts build/ordo serve (the bundled en-de) on 127.0.0.1, measures its capacity for the mix of
# build/ordo-serve-load --mix (LibreTranslate and /v1 requests: sentences, paragraphs, html,
# alternatives, n-best, lists, one bad request in ten) with 16 clients, then sends that mix at
# LOAD (70 %) of the capacity, paced, for --minutes (20). Every 30 s: requests, errors (5xx and
# other), p50/p99 latency, the server's RSS, open fds and threads (/proc/PID) and the machine's
# load average, into soak.csv. At the end: the server's fds and RSS at rest (idle connections
# closed) against the same before the soak, its /metrics 5xx count, a summary, and the picture
# (build/ordo-plot-csv: soak.png relative to the first sample after warm-up, soak_latency.png).
#
#   bash tools/serve/soak.sh                 # 20 minutes (+ ~2 min of start-up and capacity)
#   bash tools/serve/soak.sh --minutes 3     # a quick look
#   WORK=runs/soak LOAD=0.7 WARMUP_MINUTES=2 SERVE_ARGS="--threads 2" bash tools/serve/soak.sh
#   (also INTERVAL (30 s), CAPACITY_SECONDS (60), CLIENTS, SENTENCES, PNG, RSS_GROWTH_LIMIT (5 %))
#
# Loopback only; bounded: the load stops after --minutes, every wait has a deadline. Exit status
# 0 when RSS and fds grew less than 5 % after the warm-up (intervals and at rest), no 5xx and no
# failed request, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
minutes=20
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --minutes=*) minutes="${1#*=}"; shift ;;
    *) echo "soak: unknown argument $1 (--minutes N)" >&2; exit 2 ;;
  esac
done
[[ "$minutes" =~ ^[0-9]+([.][0-9]+)?$ ]] && awk "BEGIN{exit !($minutes > 0 && $minutes <= 1440)}" \
  || { echo "soak: --minutes must be a number in (0, 1440]" >&2; exit 2; }
work="${WORK:-$root/runs/soak}"
load="${LOAD:-0.7}"
interval="${INTERVAL:-30}"
warmup_minutes="${WARMUP_MINUTES:-2}"
rss_limit="${RSS_GROWTH_LIMIT:-5}"
sentences="${SENTENCES:-$root/tests/data/samples/multi30k_val100.en}"
capacity_seconds="${CAPACITY_SECONDS:-60}"
mkdir -p "$work"
for tool in ordo ordo-serve-load ordo-plot-csv; do
  [ -x "$build/$tool" ] || { echo "soak: no $build/$tool (cmake --build build --target ordo_cli $tool)" >&2; exit 2; }
done

server=""
cleanup() { if [ -n "$server" ]; then kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true; fi; }
trap cleanup EXIT

log="$work/serve.log"
: > "$log"  # before the server opens it: the wait below reads it at once
# shellcheck disable=SC2086
"$build/ordo" serve --host 127.0.0.1 --port 0 --model en-de ${SERVE_ARGS:-} > "$log" 2>&1 &
server=$!
port=""
for _ in $(seq 1 600); do  # 60 s at most
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
  grep -q "ordo serve: ready" "$log" && [ -n "$port" ] && break
  kill -0 "$server" 2> /dev/null || { cat "$log" >&2; echo "soak: ordo serve exited" >&2; exit 1; }
  sleep 0.1
done
grep -q "ordo serve: ready" "$log" || { cat "$log" >&2; echo "soak: ordo serve not ready in 60 s" >&2; exit 1; }
url="http://127.0.0.1:$port"
echo "soak: ordo serve ${SERVE_ARGS:-} (pid $server) on $url; load average $(cut -d' ' -f1-3 /proc/loadavg)"

field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" <<< "$2"; }
rest() {  # the server at rest: fds and RSS (MB) once its idle keep-alive connections are closed
  sleep 7
  echo "$(find "/proc/$server/fd" -mindepth 1 -maxdepth 1 | wc -l) $(awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$server/status")"
}

# Capacity: 16 clients as fast as they go (after 20 s of warm-up, not counted).
load_cmd=("$build/ordo-serve-load" --url "$url" --mix --sentences "$sentences" --timeout 120)
"${load_cmd[@]}" --clients 16 --requests 1000000 --seconds 20 > /dev/null || true
r=$("${load_cmd[@]}" --clients 16 --requests 1000000 --seconds "$capacity_seconds" || true)
capacity=$(field rps "$r")
rate=$(awk "BEGIN {printf \"%.2f\", $capacity * $load}")
echo "soak: capacity $capacity requests/s (16 clients, ${capacity_seconds} s: $r); soak at $rate requests/s"
read -r fds_before rss_before < <(rest)

seconds=$(awk "BEGIN {print int($minutes * 60)}")
requests=$(awk "BEGIN {print int($rate * $seconds) + 1}")
clients="${CLIENTS:-$(awk "BEGIN {c = int($rate * 4) + 1; print (c < 8 ? 8 : (c > 256 ? 256 : c))}")}"
csv="$work/soak.csv"
echo "soak: $minutes min at $rate requests/s from $clients clients, a row every $interval s into $csv"
timeout $((seconds + 300)) "${load_cmd[@]}" --clients "$clients" --rate "$rate" --seconds "$seconds" \
  --requests "$requests" --report-every "$interval" --pid "$server" --csv "$csv" | tee "$work/load.log" || true
result=$(grep ORDO_RESULT "$work/load.log" || echo "ORDO_RESULT none")
read -r fds_after rss_after < <(rest)
server_5xx=$(curl -s --max-time 10 "$url/metrics" | awk '/^ordo_http_requests_total\{.*status="5/ {s += $NF} END {print s + 0}')
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=""
[ "$status" = 0 ] || echo "soak: ordo serve exited with status $status after SIGTERM" >&2

# Rows while the load ran (the sample at its end is taken as the clients hang up).
# (load1_x1000: the load average on the latency chart's scale.)
awk -F, -v OFS=, -v end="$seconds" 'NR == 1 {print $0, "load1_x1000"; next} $1 < end {print $0, $12 * 1000}' \
  "$csv" > "$work/soak.steady.csv"
# Summary: intervals after the warm-up.
summary=$(awk -F, -v warm="$(awk "BEGIN {print $warmup_minutes * 60}")" '
  NR == 1 { next }
  { rows[++n] = $0 }
  END {
    for (i = 1; i <= n; ++i) {
      split(rows[i], c, ",")
      if (c[1] < warm) continue
      m++; p50[m] = c[7]; p99[m] = c[8]; rss[m] = c[9]; fds[m] = c[10]; thr[m] = c[11]; la[m] = c[12]
    }
    if (m < 2) { print "too_short=1"; exit }
    tail = (m >= 3 ? 3 : m); r = 0; f = 0
    for (i = m - tail + 1; i <= m; ++i) { r += rss[i]; f += fds[i] }
    r /= tail; f /= tail
    rmax = 0; fmax = 0; pmax = 0; lmin = 1e9; lmax = 0; lsum = 0
    for (i = 1; i <= m; ++i) {
      if (rss[i] > rmax) rmax = rss[i]; if (fds[i] > fmax) fmax = fds[i]; if (p99[i] > pmax) pmax = p99[i]
      if (la[i] < lmin) lmin = la[i]; if (la[i] > lmax) lmax = la[i]; lsum += la[i]
    }
    # medians of p50 and p99 over the intervals
    for (i = 1; i <= m; ++i) for (j = i + 1; j <= m; ++j) { if (p50[j] < p50[i]) { t = p50[i]; p50[i] = p50[j]; p50[j] = t } if (p99[j] < p99[i]) { t = p99[i]; p99[i] = p99[j]; p99[j] = t } }
    printf "intervals=%d ", m
    printf "rss_first=%.1f rss_last=%.1f rss_max=%.1f rss_growth_pct=%.2f ", rss[1], r, rmax, (r - rss[1]) / rss[1] * 100
    printf "fds_first=%d fds_last=%.1f fds_max=%d threads_first=%d threads_last=%d ", fds[1], f, fmax, thr[1], thr[m]
    printf "p50_median_ms=%.0f p99_median_ms=%.0f p99_max_ms=%.0f load1_min=%.2f load1_mean=%.2f load1_max=%.2f\n", p50[int((m + 1) / 2)], p99[int((m + 1) / 2)], pmax, lmin, lsum / m, lmax
  }' "$work/soak.steady.csv")
echo "soak: $result"
echo "soak: after the warm-up: $summary"
echo "soak: at rest before: $fds_before fds, $rss_before MB; after: $fds_after fds, $rss_after MB; server-side 5xx: $server_5xx"

warm=$(awk "BEGIN {print $warmup_minutes + 0.01}")
png="${PNG:-$work/soak.png}"
"$build/ordo-plot-csv" --csv "$work/soak.steady.csv" --x t_s --x-scale 0.0166667 --y rss_mb,fds,threads --relative-from "$warm" --band 5 \
  --out "$png" --title "ordo serve, $minutes min at $rate req/s (70 % of capacity): memory, fds, threads" \
  --x-label minutes --y-label "% of the first sample after ${warmup_minutes} min warm-up"
"$build/ordo-plot-csv" --csv "$work/soak.steady.csv" --x t_s --x-scale 0.0166667 --y p50_ms,p99_ms,load1_x1000 --out "${png%.png}_latency.png" \
  --title "ordo serve, $minutes min at $rate req/s: latency per 30 s and the load average" --x-label minutes \
  --y-label "ms (load1_x1000: 1-minute load average x 1000)"
echo "soak: pictures $png ${png%.png}_latency.png"

verdict=0
fail() { echo "soak: FAIL: $*" >&2; verdict=1; }
[ "$(field too_short " $summary")" = 1 ] && fail "the run is too short for a summary after the warm-up"
awk "BEGIN {exit !($(field rss_growth_pct " $summary") < $rss_limit)}" || fail "RSS grew $(field rss_growth_pct " $summary") % after the warm-up"
awk "BEGIN {exit !($fds_after <= $fds_before * 1.05 + 1)}" || fail "fds at rest $fds_before before, $fds_after after"
[ "$(field errors_5xx "$result")" = 0 ] && [ "$server_5xx" = 0 ] || fail "5xx answers: $(field errors_5xx "$result") seen, $server_5xx counted by the server"
[ "$(field errors_other "$result")" = 0 ] || fail "$(field errors_other "$result") requests failed otherwise"
[ "$status" = 0 ] || fail "ordo serve did not exit 0 after SIGTERM"
[ "$verdict" = 0 ] && echo "soak: PASS"
exit "$verdict"
