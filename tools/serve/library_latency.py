# The library's side of `MODE=latency bash tools/serve/bench.sh`: the batch-1 latency of the
# work `ordo serve` does for a LibreTranslate POST /translate of one line, done in-process
# through the public library, so that the served figure minus this one is the HTTP and batching
# overhead. The same work: the translation preset (as the server's --translation-preset
# default), the model's own generation_config.json over it, the line cut into sentences by the
# source language's rules and those translated as one batch (translate_documents()), one worker
# with THREADS intra-op threads and OpenMP's passive wait policy (set by `import ordo`).
#
#   python3 tools/serve/library_latency.py MODEL_DIR THREADS SENTENCES.en [SOURCE]
#
# Each line of the file is one call, in order, after one warm-up call with the last line (as
# ordo-serve-load --warmup 1). Prints the same result line as ordo-serve-load:
#   ORDO_RESULT requests=.. sentences=.. p50_ms=.. p95_ms=..   (sentences: after the split)
import sys
import threading
import time

import ordo


def percentile(values, p):
    """Nearest rank, as ordo-serve-load's percentile()."""
    v = sorted(values)
    rank = -(-p * len(v) // 100)  # ceil
    return v[min(len(v) - 1, max(0, int(rank) - 1))] if v else 0.0


def main():
    model, threads, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    source = sys.argv[4] if len(sys.argv) > 4 else "en"
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    translator = ordo.Translator(model, threads=threads, inter_threads=1)
    latencies, failures = [], []

    # On a thread of its own, as the server's one batch worker: the calls then run on this
    # thread (from Python's main thread each would run on a new one, with new OpenMP threads).
    def run():
        try:
            translator.translate_documents([lines[-1]], source)
            for line in lines:
                start = time.perf_counter()
                translator.translate_documents([line], source)
                latencies.append(1000 * (time.perf_counter() - start))
        except ordo.Error as e:
            failures.append(e)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if failures:
        sys.exit("library_latency: %s" % failures[0])
    sentences = sum(len(ordo.split_sentences(line, source)) for line in lines)
    print("ORDO_RESULT requests=%d sentences=%d p50_ms=%.0f p95_ms=%.0f"
          % (len(latencies), sentences, percentile(latencies, 50), percentile(latencies, 95)))


if __name__ == "__main__":
    main()
