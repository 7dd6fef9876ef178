#!/usr/bin/env bash
# Replays denial-of-service cases (docs/serving.md, "Hostile clients") against `ordo serve` on 127.0.0.1 and says
# whether the server stayed answerable: GET /health is probed every 100 ms on a fresh
# connection throughout (p50 / p99 / worst latency and failures, per phase), and the server's
# peak RSS (VmHWM of /proc/PID/status) is read at the end.
#
#   html        80 concurrent 10 KB format=html requests of 3,330 unclosed <b>
#   slowloris   130 connections sending a request one byte a second
#   idle        500 connections that send nothing, then how long a one-sentence request takes
#   expensive   32 texts x beam 16 x n-best 16 x min = max 1024 new tokens (refused by the cost
#               limit), then 8 texts of that kind (within it) whose client hangs up after 5 s,
#               then how long a one-sentence request takes
#   pipelining  three requests in one write; a request with a second appended after its body
#   attention   "attention": true on 16 texts of 1,400 characters x 250 forced tokens, and on 256 texts
#               x beam 4 x n-best 4 (both past --max-attention-values: 400 at once), then 4 such
#               texts x 100 tokens within it (answered whole, its size and time)
#   vmap        "use_vmap": true on folders whose vmap.txt is missing, empty, a directory, a FIFO
#               (each a 400 at once; the script serves those folders beside en-de when it starts
#               the server, otherwise only the missing file is tried on en-de)
#
#   bash tools/serve/attack.sh                       # starts build/ordo serve (en-de) on a free port
#   PORT=5000 PID=1234 bash tools/serve/attack.sh    # a server already running (PID: for its RSS)
#
#   PHASES  "html slowloris idle expensive pipelining attention vmap" (default)
#   SLOW_SECONDS  slowloris length (default 30)
#   SERVE_ARGS  extra `ordo serve` arguments when the script starts the server
# Bounded: every phase has its own deadline and the whole run at most 300 s. Needs python3
# (standard library only). Exit status 0 when /health always answered within 1 s and the
# server is still alive, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${ORDO_BUILD_DIR:-$root/build}"
phases="${PHASES:-html slowloris idle expensive pipelining attention vmap}"
slow_seconds="${SLOW_SECONDS:-30}"
port="${PORT:-}"
pid="${PID:-}"
log=""
started=""
scratch=""

cleanup() {
  if [ -n "$started" ]; then kill "$started" 2> /dev/null || true; wait "$started" 2> /dev/null || true; fi
  [ -n "$log" ] && rm -f "$log"
  [ -n "$scratch" ] && rm -rf "$scratch"
}
trap cleanup EXIT

models=()
if [ -z "$port" ] && [[ " $phases " == *" vmap "* ]]; then
  # en-de's files (linked) with a bad vmap.txt each: missing, empty, a directory, a FIFO.
  scratch=$(mktemp -d)
  entries='{"name": "en-de", "path": "'"$root"'/models/en-de"}'
  for kind in missing empty directory fifo; do
    mkdir "$scratch/$kind"
    ln -s "$root"/models/en-de/* "$scratch/$kind/"
    case $kind in
      empty) : > "$scratch/$kind/vmap.txt" ;;
      directory) mkdir "$scratch/$kind/vmap.txt" ;;
      fifo) mkfifo "$scratch/$kind/vmap.txt" ;;
    esac
    entries="$entries, {\"name\": \"vmap-$kind\", \"path\": \"$scratch/$kind\"}"
  done
  echo "{\"models\": [$entries]}" > "$scratch/models.json"
  models=(--models "$scratch/models.json")
fi

if [ -z "$port" ]; then
  log=$(mktemp)
  # shellcheck disable=SC2086
  "$build/ordo" serve --host 127.0.0.1 --port 0 "${models[@]}" ${SERVE_ARGS:-} > "$log" 2>&1 &
  started=$!
  pid=$started
  for _ in $(seq 1 600); do  # 60 s at most
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
    grep -q "ordo serve: ready" "$log" && [ -n "$port" ] && break
    kill -0 "$started" 2> /dev/null || { cat "$log" >&2; echo "attack: ordo serve exited" >&2; exit 1; }
    sleep 0.1
  done
  grep -q "ordo serve: ready" "$log" || { cat "$log" >&2; echo "attack: ordo serve not ready in 60 s" >&2; exit 1; }
  echo "attack: ordo serve ${SERVE_ARGS:-} (pid $pid) on 127.0.0.1:$port"
fi

timeout 300 python3 - "$port" "${pid:-0}" "$phases" "$slow_seconds" "${scratch:+yes}" << 'PY'
import json, socket, sys, threading, time

port, pid, phases, slow_seconds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(), float(sys.argv[4])
bad_vmaps = sys.argv[5] == "yes"
HOST = "127.0.0.1"
probes = []  # (phase, seconds or None)
phase = ["start"]
stop = threading.Event()


def request(method, path, body=None, timeout=10.0, headers=""):
    """One request on a new connection: (status, body), status None when no answer came."""
    data = body.encode() if isinstance(body, str) else (body or b"")
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as s:
            s.sendall(head.encode() + b"\r\n" + data)
            reply = read_all(s, time.monotonic() + timeout)
        status = int(reply[9:12]) if reply.startswith(b"HTTP/1.1 ") else None
        return status, reply.split(b"\r\n\r\n", 1)[-1]
    except OSError:
        return None, b""


def read_all(s, deadline):
    out = []  # joined once: a 50 MB answer in 64 KB pieces is not copied 800 times
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except OSError:
            break
        if not chunk:
            break
        out.append(chunk)
    return b"".join(out)


def prober():
    while not stop.is_set():
        start = time.monotonic()
        status, _ = request("GET", "/health", timeout=5)
        probes.append((phase[0], time.monotonic() - start if status == 200 else None))
        time.sleep(max(0.0, 0.1 - (time.monotonic() - start)))


def rss():
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return fields["VmHWM"].strip(), fields["VmRSS"].strip()
    except (OSError, KeyError, ValueError):
        return "?", "?"


def run_threads(targets, seconds):
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for t in threads:
        t.start()
    deadline = time.monotonic() + seconds
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))


def html():
    body = json.dumps({"q": "<b>" * 3330 + "A man.", "source": "en", "target": "de", "format": "html"})
    statuses = []
    run_threads([lambda: statuses.append(request("POST", "/translate", body, timeout=40)[0]) for _ in range(80)], 45)
    counts = {s: statuses.count(s) for s in set(statuses)}
    print(f"  80 x {len(body)} B html requests: statuses {counts} ({80 - len(statuses)} unanswered in 45 s)")


def slowloris():
    text = b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 48\r\n\r\n" + \
           b'{"q": "Hello", "source": "en", "target": "de"}  '
    socks = []
    for _ in range(130):
        try:
            socks.append(socket.create_connection((HOST, port), timeout=5))
        except OSError:
            pass
    sent, answered, closed = [0] * len(socks), [b""] * len(socks), [False] * len(socks)
    start = time.monotonic()
    while time.monotonic() - start < slow_seconds:
        for i, s in enumerate(socks):
            if closed[i]:
                continue
            try:
                if sent[i] < len(text) - 1:
                    s.send(text[sent[i]:sent[i] + 1])
                    sent[i] += 1
                s.setblocking(False)
                chunk = s.recv(65536)
                if chunk:
                    answered[i] += chunk
                else:
                    closed[i] = True
            except BlockingIOError:
                pass
            except OSError:
                closed[i] = True
            finally:
                s.setblocking(True)
        time.sleep(1.0)
    timeouts = sum(a.startswith(b"HTTP/1.1 408") for a in answered)
    print(f"  {len(socks)} connections, one byte a second for {slow_seconds:.0f} s: {timeouts} answered 408, "
          f"{sum(closed)} closed by the server")
    for s in socks:
        s.close()


def idle():
    socks = []
    for _ in range(500):
        try:
            socks.append(socket.create_connection((HOST, port), timeout=5))
        except OSError:
            pass
    time.sleep(0.5)
    start = time.monotonic()
    status, _ = request("POST", "/translate", json.dumps({"q": "Hello.", "source": "en", "target": "de"}), timeout=60)
    took = time.monotonic() - start
    closed = 0
    for s in socks:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b""
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        s.close()
    print(f"  {len(socks)} idle connections: one sentence {status} in {took:.2f} s; {closed} of them closed by the "
          f"server (per-address cap)")


def expensive():
    big = {"model": "en-de", "text": ["A man is sleeping on a couch."] * 32, "beam_size": 16, "n_best": 16,
           "min_new_tokens": 1024, "max_new_tokens": 1024}
    start = time.monotonic()
    status, body = request("POST", "/v1/translate", json.dumps(big), timeout=60)
    print(f"  32 texts x beam 16 x 1024 tokens: {status} in {time.monotonic() - start:.1f} s: {body[:160].decode(errors='replace').strip()}")
    big["text"] = big["text"][:8]
    start = time.monotonic()
    status, _ = request("POST", "/v1/translate", json.dumps(big), timeout=5)
    print(f"  8 texts x beam 16 x 1024 tokens, client gone after 5 s: {status} after {time.monotonic() - start:.1f} s")
    start = time.monotonic()
    status, _ = request("POST", "/translate", json.dumps({"q": "Hello.", "source": "en", "target": "de"}), timeout=60)
    print(f"  then one sentence: {status} in {time.monotonic() - start:.2f} s")


def pipelining():
    def post(q, last=False):
        body = json.dumps({"q": q, "source": "en", "target": "de"}).encode()
        return (b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                (b"Connection: close\r\n" if last else b"") + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    for name, data, expected in [
            ("three requests in one write", post("One.") + post("Two.") + post("Three.", True), 3),
            ("a GET appended after a POST's body", post("One.") + b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 2)]:
        with socket.create_connection((HOST, port), timeout=10) as s:
            s.sendall(data)
            reply = read_all(s, time.monotonic() + 20)
        answers = reply.count(b"HTTP/1.1 ")
        print(f"  {name}: {answers} answers of {expected} ({'ok' if answers == expected else 'LOST'})")


def attention():
    text = ""
    while len(text) < 1400:
        text += "A man in a red jacket is riding a bicycle down the busy street near the old market. "
    for name, request_body in [
            ("16 texts x 250 forced tokens", {"model": "en-de", "text": [text] * 16, "beam_size": 1, "min_new_tokens": 250,
                                              "max_new_tokens": 255, "attention": True}),
            ("256 texts x beam 4 x n-best 4", {"model": "en-de", "text": [text[:400]] * 256, "beam_size": 4, "n_best": 4,
                                               "attention": True}),
            ("4 texts x 100 forced tokens", {"model": "en-de", "text": [text] * 4, "beam_size": 1, "min_new_tokens": 100,
                                             "max_new_tokens": 100, "attention": True})]:
        start = time.monotonic()
        status, body = request("POST", "/v1/translate", json.dumps(request_body), timeout=120)
        what = body[:150].decode(errors="replace").strip() if status != 200 else f"{len(body) / 1e6:.1f} MB"
        print(f"  {name}, attention: {status} in {time.monotonic() - start:.2f} s: {what}; peak RSS {rss()[0]}")


def vmap():
    models = [f"vmap-{kind}" for kind in ("missing", "empty", "directory", "fifo")] if bad_vmaps else ["en-de"]
    for model in models:
        start = time.monotonic()
        status, body = request("POST", "/v1/translate", json.dumps({"model": model, "text": "Hello.", "use_vmap": True}),
                               timeout=30)
        print(f"  {model}, use_vmap: {status} in {time.monotonic() - start:.2f} s: "
              f"{body[:140].decode(errors='replace').strip()}")


threading.Thread(target=prober, daemon=True).start()
time.sleep(1)
for name in phases:
    phase[0] = name
    print(f"{name}:")
    {"html": html, "slowloris": slowloris, "idle": idle, "expensive": expensive, "pipelining": pipelining,
     "attention": attention, "vmap": vmap}[name]()
    time.sleep(1)
phase[0] = "end"
time.sleep(0.5)
stop.set()

ok = True
print("GET /health every 100 ms during each phase (fresh connection each):")
for name in ["start"] + phases + ["end"]:
    mine = [p for ph, p in probes if ph == name]
    if not mine:
        continue
    answered = sorted(p for p in mine if p is not None)
    failed = len(mine) - len(answered)
    if answered:
        p50 = answered[len(answered) // 2]
        p99 = answered[min(len(answered) - 1, int(len(answered) * 0.99))]
        print(f"  {name:11s} {len(mine):4d} probes, {failed} failed, p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
              f"worst {answered[-1] * 1000:.1f} ms")
        ok = ok and failed == 0 and answered[-1] < 1.0
    else:
        print(f"  {name:11s} {len(mine):4d} probes, all failed")
        ok = False
status, metrics = request("GET", "/metrics", timeout=5)
dropped = [line.decode() for line in metrics.splitlines() if line.startswith(b"ordo_http_connections_dropped_total{")]
if dropped:
    print("connections dropped by the server: " + ", ".join(d.split('reason="')[1].replace('"}', ":") for d in dropped))
alive = pid == 0 or __import__("os").path.exists(f"/proc/{pid}")
hwm, now = rss()
print(f"server {'alive' if alive else 'DEAD'}; peak RSS (VmHWM) {hwm}, RSS now {now}")
sys.exit(0 if ok and alive else 1)
PY
