#!/usr/bin/env python3
"""Resident memory of `ordo serve` as it meets many distinct batch shapes.

Each packed GEMM keeps oneDNN kernels per (row count, threads); a server meets every row
count. This starts `ordo serve` on 127.0.0.1 (a free port), sends N requests whose sentence
counts and lengths differ (so encoder and decoder GEMMs see ~N distinct row counts), and
prints the server's VmRSS after loading, after each quarter, and at the end. Bounded: N
requests, each with a timeout; the server is stopped at the end.

  tools/bench/kernel_cache_rss.py ORDO_BINARY [--requests 2880] [--model en-de]
"""
import argparse, json, re, subprocess, sys, time, urllib.request


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ordo")
    ap.add_argument("--requests", type=int, default=2880)
    ap.add_argument("--model", default="en-de")
    a = ap.parse_args()
    server = subprocess.Popen([a.ordo, "serve", "--model", a.model, "--host", "127.0.0.1", "--port", "0",
                               "--threads", "1", "--batch-wait-ms", "0", "--access-log", "off"],  # stdout is not read to the end
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = None
        deadline = time.time() + 120
        while time.time() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if m:
                port = int(m.group(1))
            if "ready" in line and port:
                break
        if not port:
            sys.exit("ordo serve did not start")
        url = f"http://127.0.0.1:{port}/v1/translate"
        words = ("a man in a blue shirt is riding a bike down the street next to two dogs while the "
                 "children play in the park and a woman with a red hat sells fresh bread and cheese at "
                 "the corner market on a sunny afternoon in the old town near the river").split()

        def post(texts):
            body = json.dumps({"model": a.model, "text": texts, "max_new_tokens": 8}).encode()
            req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=60) as r:
                r.read()

        post(["warm up"])
        print(f"after loading and one request: {rss_mb(server.pid):.0f} MB", flush=True)
        start = time.time()
        for i in range(a.requests):
            sentences = 1 + i % 48          # batch sizes 1..48
            length = 1 + (i // 48) % 60     # source lengths 1..60 words: 2,880 combinations
            post([" ".join(words[(j + k) % len(words)] for k in range(length)) for j in range(sentences)])
            if (i + 1) % (a.requests // 4 or 1) == 0:
                print(f"after {i + 1} requests: {rss_mb(server.pid):.0f} MB ({time.time() - start:.0f} s)", flush=True)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
