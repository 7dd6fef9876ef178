# The measuring side of `MODE=latency bash tools/serve/bench.sh`: the batch-1 latency of the work
# `ordo serve` does for a LibreTranslate POST /translate of one line, done in-process through the
# public library, and (with --url) the same line as a request to a running `ordo serve`, the two
# interleaved line by line, so that the served figure minus the library's is the HTTP and
# batching overhead and not the host's drift between two runs. The library does the server's
# work: the translation preset (as the server's --translation-preset default), the model's own
# generation_config.json over it, the line cut into sentences by the source language's rules and
# those translated as one batch (translate_documents()), one worker with THREADS intra-op
# threads and the OpenMP wait policy `import ordo` sets (as the `ordo` command does).
#
#   python3 tools/serve/library_latency.py MODEL_DIR THREADS SENTENCES.en [SOURCE] [--url URL]
#
# Each line of the file is one call, in order, after one warm-up call with the last line. With
# --url, line i also goes to URL/translate (source SOURCE, target de) from one keep-alive
# client (Python's http.client): the library first on even lines, the server first on odd
# ones, so that neither always runs on caches the other left. Prints one result line per side:
#   ORDO_RESULT side=library requests=.. sentences=.. p50_ms=.. p95_ms=..   (sentences: after the split)
#   ORDO_RESULT side=served requests=.. sentences=.. p50_ms=.. p95_ms=.. added_p50_ms=..
# added_p50_ms: the median over the lines of served minus library time (what the server adds).
import http.client
import json
import sys
import threading
import time
import urllib.parse

import ordo


def percentile(values, p):
    """Nearest rank, as ordo-serve-load's percentile()."""
    v = sorted(values)
    rank = -(-p * len(v) // 100)  # ceil
    return v[min(len(v) - 1, max(0, int(rank) - 1))] if v else 0.0


class Client:
    """One keep-alive connection to `ordo serve`; reconnects once when the server closed it."""

    def __init__(self, url, source):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port, self.source = parts.hostname, parts.port or 80, source
        self.connection = None

    def translate(self, line):
        body = json.dumps({"q": line, "source": self.source, "target": "de"})
        for attempt in (0, 1):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=600)
            try:
                self.connection.request("POST", "/translate", body, {"Content-Type": "application/json"})
                answer = self.connection.getresponse()
                text = answer.read()
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
                continue
            if answer.status != 200:
                raise RuntimeError("POST /translate answered %d: %s" % (answer.status, text[:200]))
            return


def main():
    args = sys.argv[1:]
    url = None
    if "--url" in args:
        at = args.index("--url")
        url = args[at + 1]
        del args[at:at + 2]
    model, threads, path = args[0], int(args[1]), args[2]
    source = args[3] if len(args) > 3 else "en"
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    translator = ordo.Translator(model, threads=threads, inter_threads=1)
    client = Client(url, source) if url else None
    library, served, failures = [], [], []

    def timed(work, line, into):
        start = time.perf_counter()
        work(line)
        into.append(1000 * (time.perf_counter() - start))

    # On a thread of its own, as the server's one batch worker: the calls then run on this
    # thread (from Python's main thread each would run on a new one, with new OpenMP threads).
    def run():
        try:
            translate = lambda line: translator.translate_documents([line], source)  # noqa: E731
            translate(lines[-1])
            if client:
                client.translate(lines[-1])
            for i, line in enumerate(lines):
                sides = [(translate, library)] + ([(client.translate, served)] if client else [])
                for work, into in sides if i % 2 == 0 else reversed(sides):
                    timed(work, line, into)
        except (ordo.Error, OSError, RuntimeError, http.client.HTTPException) as e:
            failures.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if failures:
        sys.exit("library_latency: %s" % failures[0])
    sentences = sum(len(ordo.split_sentences(line, source)) for line in lines)
    for side, latencies in (("library", library), ("served", served)):
        if latencies:
            line = "ORDO_RESULT side=%s requests=%d sentences=%d p50_ms=%.0f p95_ms=%.0f" % (
                side, len(latencies), sentences, percentile(latencies, 50), percentile(latencies, 95))
            if side == "served":
                # What the server adds, line by line: less moved by the host than either p50.
                line += " added_p50_ms=%.1f" % percentile([b - a for a, b in zip(library, served)], 50)
            print(line)


if __name__ == "__main__":
    main()
