#!/usr/bin/env bash
# Failover of `ordo serve` behind HAProxy (configs/serving/haproxy.cfg; docs/operations.md,
# "Failover"): two replicas on 127.0.0.1, HAProxy in front, and paced load from
# build/ordo-serve-load --mix (LibreTranslate and /v1 requests, one bad request in ten) for
# SECONDS (90). At 20 s replica 1 is killed with SIGKILL and started again 2 s later; at 50 s
# replica 2 gets SIGTERM (a rolling restart: it drains and exits) and is started again once it
# has exited. Reports the requests sent and failed (goal: 0 failed; the bad requests' 400s are
# expected answers), the requests HAProxy replayed (its log), and for each restarted replica,
# from its own access log, when /ready first answered 200 against when its first request came
# (goal: no request before).
#
#   bash tools/serve/failover.sh                      # ~2 minutes
#   RATE=8 SECONDS_TOTAL=120 bash tools/serve/failover.sh
#
#   RATE  requests/s (default 6)   BASE_PORT  18700 (replicas +1, +2, HAProxy +3; auto: free ports)
#   MODELS  what each replica serves (default "en-de de-en dialogsum": loading takes seconds)
#   WORK  scratch (default runs/failover)   HAPROXY_CFG  another configuration (e.g. without replays)
# Loopback only; bounded (the load stops after SECONDS_TOTAL; every wait has a deadline). Needs
# haproxy (Debian's 2.6) and python3. Exit status 0 when no request failed and no restarting
# replica got a request before it was ready, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
work="${WORK:-$root/runs/failover}"
rate="${RATE:-6}"
total="${SECONDS_TOTAL:-90}"
base_port="${BASE_PORT:-18700}"
models="${MODELS:-en-de de-en dialogsum}"
sentences="${SENTENCES:-$root/tests/data/samples/multi30k_val100.en}"
kill_at="${KILL_AT:-20}"
term_at="${TERM_AT:-50}"
command -v haproxy > /dev/null || { echo "failover: needs haproxy (apt-get install haproxy)" >&2; exit 77; }
for tool in ordo ordo-serve-load; do
  [ -x "$build/$tool" ] || { echo "failover: no $build/$tool" >&2; exit 2; }
done
mkdir -p "$work"
rm -f "$work"/*.log "$work"/*.pid "$work"/events.txt

haproxy_pid=""
controller=""
stop_replicas() {  # SIGTERM to the replicas this script started (pid files), then wait for them
  local n pid
  for n in 1 2; do
    [ -f "$work/replica$n.pid" ] || continue
    pid=$(cat "$work/replica$n.pid")
    kill -TERM "$pid" 2> /dev/null || true
    for _ in $(seq 1 900); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    rm -f "$work/replica$n.pid"
  done
}
cleanup() {
  [ -n "$controller" ] && kill "$controller" 2> /dev/null || true
  stop_replicas
  [ -n "$haproxy_pid" ] && kill "$haproxy_pid" 2> /dev/null || true
  wait 2> /dev/null || true
}
trap cleanup EXIT

if [ "$base_port" = auto ]; then
  read -r -a ports < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(0, *(s.getsockname()[1] for s in socks))')
else
  ports=(0 $((base_port + 1)) $((base_port + 2)) $((base_port + 3)))
fi
port_of() { echo "${ports[$1]}"; }
event() { echo "$(date +%s.%N) $*" >> "$work/events.txt"; }

start_replica() {  # N: replica N on BASE_PORT + N
  local model_args=() m
  for m in $models; do model_args+=(--model "$m"); done
  # In a subshell of its own: no job-control notice when it is killed.
  ( "$build/ordo" serve --host 127.0.0.1 --port "$(port_of "$1")" --threads 1 "${model_args[@]}" \
      --access-log "$work/replica$1.access.log" >> "$work/replica$1.log" 2>&1 &
    echo $! > "$work/replica$1.pid" )
  event "start replica$1 pid $(cat "$work/replica$1.pid")"
}

wait_ready() {  # N: polls replica N's /ready every 20 ms, bounded 120 s; records when it said 200
  for _ in $(seq 1 6000); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$(port_of "$1")/ready")" = 200 ]; then
      event "ready replica$1"
      return 0
    fi
    sleep 0.02
  done
  echo "failover: replica$1 not ready in 120 s" >&2
  return 1
}

for n in 1 2 3; do
  if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$(port_of "$n")/"; then
    echo "failover: port $(port_of "$n") is in use (BASE_PORT=...)" >&2; exit 2
  fi
done
start_replica 1
start_replica 2
wait_ready 1
wait_ready 2
ORDO_HAPROXY_LOG=info ORDO_HAPROXY_BIND="127.0.0.1:$(port_of 3)" ORDO_REPLICA1="127.0.0.1:$(port_of 1)" \
  ORDO_REPLICA2="127.0.0.1:$(port_of 2)" haproxy -f "${HAPROXY_CFG:-$root/configs/serving/haproxy.cfg}" -db > "$work/haproxy.log" 2>&1 &
haproxy_pid=$!
url="http://127.0.0.1:$(port_of 3)"
for _ in $(seq 1 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url/ready")" = 200 ] && break
  sleep 0.1
done
sleep 3  # both replicas pass their first health checks
echo "failover: replicas on ports $(port_of 1), $(port_of 2) ($models, 1 thread each), HAProxy on $url;" \
  "$rate requests/s for $total s; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The failures, on a timeline of their own while the load runs (a subshell: replicas it starts
# are found by their pid files).
load_start=$(date +%s.%N)
event "load start"
sleep_until() { sleep "$(awk "BEGIN {d = $load_start + $1 - $(date +%s.%N); print (d > 0 ? d : 0)}")"; }
(
  sleep_until "$kill_at"
  event "SIGKILL replica1"
  kill -KILL "$(cat "$work/replica1.pid")"
  sleep 2
  start_replica 1
  wait_ready 1
  sleep 2  # HAProxy has it back (rise 2) before the other one goes
  sleep_until "$term_at"
  event "SIGTERM replica2"
  pid2=$(cat "$work/replica2.pid")
  kill -TERM "$pid2"
  for _ in $(seq 1 900); do kill -0 "$pid2" 2> /dev/null || break; sleep 0.05; done
  event "exited replica2 ($(grep -c 'ordo serve: stopped' "$work/replica2.log") clean stop in its log)"
  start_replica 2
  wait_ready 2
) &
controller=$!

timeout $((total + 240)) "$build/ordo-serve-load" --url "$url" --mix --rate "$rate" --seconds "$total" \
  --requests "$(awk "BEGIN {print int($rate * $total) + 1}")" --clients 32 --timeout 120 --sentences "$sentences" --report-every 10 \
  | tee "$work/load.log" || true
event "load end"
timeline=ok
wait "$controller" || { timeline=failed; echo "failover: the kill/restart timeline failed" >&2; }
controller=""
result=$(grep ORDO_RESULT "$work/load.log" || echo "ORDO_RESULT none")

# Stop the (restarted) replicas, then HAProxy: its log is complete after.
stop_replicas
kill -USR1 "$haproxy_pid" 2> /dev/null || true
wait "$haproxy_pid" 2> /dev/null || true
haproxy_pid=""

python3 - "$work" "$result" "$timeline" << 'PY'
import datetime, json, re, sys
work, result, timeline = sys.argv[1], sys.argv[2], sys.argv[3]
fields = dict(kv.split("=", 1) for kv in result.split()[1:] if "=" in kv)
events = []
for line in open(f"{work}/events.txt"):
    t, what = line.split(" ", 1)
    events.append((float(t), what.strip()))
# HAProxy httplog lines: client [accept date] frontend backend/server Tq/Tw/Tc/Tr/Ta status ... retries ... "request"
log = re.compile(r"\[(\d+/\w+/\d+:\d+:\d+:\d+\.\d+)\] \S+ \S+/(\S+) (-?\d+)/(-?\d+)/(-?\d+)/(-?\d+)/(-?\d+) (\d+) .*? "
                 r"\d+/\d+/\d+/\d+/(\+?)(\d+) \d+/\d+ \"(\S+) (\S+)")
requests = []
states = []
for line in open(f"{work}/haproxy.log", errors="replace"):
    m = log.search(line)
    if m:
        accepted = datetime.datetime.strptime(m.group(1), "%d/%b/%Y:%H:%M:%S.%f").astimezone().timestamp()
        tq, tw, tc = (max(0, int(m.group(i))) for i in (3, 4, 5))
        requests.append(dict(t=accepted + (tq + tw + tc) / 1000.0, server=m.group(2), status=int(m.group(8)),
                             redispatched=m.group(9) == "+", retries=int(m.group(10)), path=m.group(12)))
    elif ("is DOWN" in line or "is UP" in line) and "[WARNING]" not in line:
        states.append(line.strip())
api = [r for r in requests if r["path"] in ("/translate", "/v1/translate")]
replayed = [r for r in api if r["retries"] > 0]
print(f"failover: client: sent {fields.get('requests')}, answered as expected "
      f"{int(fields.get('requests', 0)) - int(fields.get('errors', 0))} (400 for the bad ones: {fields.get('bad_request_400')}),"
      f" failed {fields.get('errors')} (5xx {fields.get('errors_5xx')}, other {fields.get('errors_other')});"
      f" p50 {fields.get('p50_ms')} ms, p99 {fields.get('p99_ms')} ms")
print(f"failover: HAProxy: {len(api)} requests logged, {len(replayed)} replayed on another replica"
      f" ({sum(r['redispatched'] for r in replayed)} redispatched), statuses of replayed:"
      f" {sorted(set(r['status'] for r in replayed))}; per replica: "
      + ", ".join(f"{s} {sum(r['server'] == s for r in api)}" for s in ("replica1", "replica2")))
for s in states:
    print("failover: HAProxy:", s[:160])
ok = fields.get("errors") == "0" and timeline == "ok"
t0 = next(t for t, w in events if w == "load start")
API = ("/translate", "/v1/translate", "/v1/summarize", "/v1/score", "/detect")


def instances(n):
    """Replica n's access log cut into its runs (a run starts with its first /ready probe after
    the previous run's last line): [(ready, [(arrival, route, status)])], times in epoch seconds."""
    runs, starts = [], [t for t, w in events if w.startswith(f"start replica{n}")]
    for line in open(f"{work}/replica{n}.access.log"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        t = datetime.datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        run = sum(1 for s in starts if s <= t) - 1
        while len(runs) <= run:
            runs.append([None, []])
        if e["route"] == "/ready" and e["status"] == 200 and runs[run][0] is None:
            runs[run][0] = t
        runs[run][1].append((t - e.get("latency_ms", 0) / 1000.0, e["route"], e["status"]))
    return runs


for n in (1, 2):
    name = f"replica{n}"
    how = next((w.split()[0] for t, w in events if w in (f"SIGKILL {name}", f"SIGTERM {name}")), None)
    if how is None:
        print(f"failover: {name} was never stopped (the timeline did not run)")
        ok = False
        continue
    went = next(t for t, w in events if w == f"{how} {name}")
    restarted = next(t for t, w in events if w.startswith(f"start {name}") and t > went)
    runs = instances(n)
    if len(runs) < 2 or runs[1][0] is None:
        print(f"failover: {name}: its restarted run never answered /ready 200")
        ok = False
        continue
    ready, seen = runs[1]
    api = [t for t, route, status in seen if route in API]
    early = [t for t in api if t < ready]
    first = min(api, default=float("nan"))
    served_before = sum(1 for t, route, _ in runs[0][1] if route in API)
    print(f"failover: {name}: {served_before} requests served, {how} at {went - t0:.1f} s; started again at"
          f" {restarted - t0:.1f} s; its /ready first 200 at {ready - t0:.1f} s; first request at"
          f" {first - t0:.1f} s ({first - ready:+.2f} s after ready); requests before ready: {len(early)};"
          f" served after the restart: {len(api)}")
    load_end = next(t for t, w in events if w == "load end")
    if early or (not api and ready < load_end - 3):
        ok = False
print("failover: PASS" if ok else "failover: FAIL")
sys.exit(0 if ok else 1)
PY
