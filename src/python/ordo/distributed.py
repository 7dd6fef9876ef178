"""Translate a corpus on a Dask cluster: ``python3 -m ordo.distributed -m MODEL -i IN -o OUT``.

The input is cut into partitions of ``--partition-lines`` lines; each partition is one Dask task,
run on a worker process that loads the model once and keeps it (``_translator``), and its output
comes back to this process, which writes it as a part file (atomically renamed) in
``OUT.parts/`` beside a manifest of the input's hash and the options. When every partition is
there, the parts are joined in input order into OUT: byte for byte what ``ordo translate`` writes
for the same file and options (empty lines are not run, CR LF line ends lose their CR, a last
line without a newline still counts, ``--n-best`` writes ``line ||| text ||| score``). A rerun
after a crash or Ctrl-C translates only the partitions whose part file is missing; a worker that
dies has its tasks run again elsewhere by the scheduler (and failed tasks ``--retries`` times).

The decoding flags are made from ordo's one table of decoding options (``ordo.decode_options()``),
as the command line's are; nothing here lists option names again.
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

PROG = "python3 -m ordo.distributed"
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1

# ---------------------------------------------------------------------------------------------
# The worker side: one Translator per worker process and model settings, loaded at its first
# task and kept for the next ones (a module-level cache: the module is imported once per worker).

_TRANSLATORS = {}
_TRANSLATORS_LOCK = threading.Lock()
_BUSY = [0, False]  # tasks of this module running in this worker process; atexit registered


def _exit_now_if_busy():
    """atexit in a worker: when the cluster closes (Ctrl-C on the client) while a task is still
    inside ordo on a worker thread, end the process at once; finalizing Python under a thread that
    will come back from C++ aborts with "Fatal Python error". Nothing of a task is kept anyway."""
    if _BUSY[0]:
        os._exit(0)


_BUSY_LOCK = threading.Lock()


class _Busy:
    def __enter__(self):
        with _BUSY_LOCK:
            if not _BUSY[1]:
                import atexit

                atexit.register(_exit_now_if_busy)
                _BUSY[1] = True
            _BUSY[0] += 1

    def __exit__(self, *exc):
        with _BUSY_LOCK:
            _BUSY[0] -= 1


def _translator(model, load_options):
    """The worker's Translator for (model, load options), and whether this call loaded it. A
    worker of a cluster that outlives the run (dask worker) keeps only the last model asked for."""
    key = (model, tuple(sorted(load_options.items())))
    with _TRANSLATORS_LOCK:  # a worker with several threads still loads a model once
        translator = _TRANSLATORS.get(key)
        if translator is not None:
            return translator, False
        import ordo

        _TRANSLATORS.clear()  # another run's model: its memory goes back before this one loads
        translator = ordo.Translator(model, **load_options)
        _TRANSLATORS[key] = translator
        return translator, True


def _format(result, index, nbest):
    """One output line (or n-best lines) as ordo translate's OutputWriter writes them."""
    hypotheses = [] if result is None else list(result.hypotheses)
    if not nbest:
        return (hypotheses[0].text if hypotheses else "") + "\n"
    if result is None:  # an empty input or a failed one: one empty hypothesis, score 0
        return "%d |||  ||| 0\n" % index
    # std::ostream << setprecision(6) << float: printf's %g with 6 digits.
    return "".join("%d ||| %s ||| %.6g\n" % (index, h.text, h.score) for h in hypotheses)


def translate_partition(model, load_options, options, first, lines, nbest, input_name):
    """Runs on a worker: the output text of input lines first+1 ... first+len(lines).

    Returns a dict (plain data, so that any client can read it): ``text``, ``errors`` (input
    lines that failed on their own: [line number, message], as ``ordo translate`` reports them
    and gives an empty output line), ``pid`` and ``loaded`` (whether this task loaded the model).
    """
    with _Busy():
        return _translate_partition(model, load_options, options, first, lines, nbest, input_name)


def _translate_partition(model, load_options, options, first, lines, nbest, input_name):
    import ordo

    translator, loaded = _translator(model, load_options)
    positions = [k for k, line in enumerate(lines) if line]  # empty lines are not run
    inputs = [lines[k] for k in positions]
    results = [None] * len(lines)
    errors = []
    if inputs:
        try:
            done = translator.translate_batch(inputs, **options)
        except ordo.Error:
            done = []  # one input that fails must not lose the others: one by one
            for k in positions:
                try:
                    done.append(translator.translate_batch([lines[k]], **options)[0])
                except ordo.Error as e:
                    errors.append([first + k + 1, "%s line %d: %s" % (input_name, first + k + 1, e)])
                    done.append(None)
        for k, result in zip(positions, done):
            results[k] = result
    text = "".join(_format(results[k], first + k, nbest) for k in range(len(lines)))
    return {"text": text, "errors": errors, "pid": os.getpid(), "loaded": loaded}


def check_settings(model, load_options, options, line):
    """Runs on a worker before the partitions: loads the model (kept for them) and translates one
    line with the options, so that a bad model or option is one clear error, not one per line.
    Returns {"error": message or None, "pid", "loaded"}."""
    import ordo

    loaded = False
    with _Busy():
        try:
            translator, loaded = _translator(model, load_options)
            translator.translate_batch([line] if line else [], **options)
        except ordo.Error as e:
            return {"error": str(e), "pid": os.getpid(), "loaded": loaded}
    return {"error": None, "pid": os.getpid(), "loaded": loaded}


# ---------------------------------------------------------------------------------------------
# The client side.


class UsageError(Exception):
    """A bad command line or input: message and exit status."""

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def _option_table():
    """ordo's tables of options, through the package: dicts with name, flag, type, metavar,
    help; the decoding options first, then the batching and model options."""
    import ordo

    table = []
    for group, entries in (("decode", ordo.decode_options()), ("batch", ordo.batch_options()),
                           ("model", ordo.model_options())):
        for entry in entries:
            get = entry.get if isinstance(entry, dict) else lambda key, e=entry: getattr(e, key, None)
            spec = {key: get(key) for key in ("name", "flag", "type", "metavar", "help")}
            spec["group"] = group
            table.append(spec)
    return table


def _value_parser(spec):
    """argparse type= for one table entry: the table reads the text, as `ordo translate` reads
    the flag (type and range), and its error is argparse's."""
    import ordo

    def parse(text):
        try:
            return ordo.parse_option(spec["name"], text)
        except ordo.Error as e:
            raise argparse.ArgumentTypeError(str(e))

    parse.__name__ = str(spec["type"])
    return parse


def build_parser(table):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Translate a corpus (one sentence per line) on a Dask cluster; the output is "
        "what `ordo translate` writes for the same file and options.",
    )
    parser.add_argument("-m", "--model", default="en-de", help="model folder or bundled name (default en-de)")
    parser.add_argument("-i", "--input", required=True, help="input text, one sentence per line")
    parser.add_argument("-o", "--output", required=True, help="output file; its parts are kept in OUTPUT.parts/ until done")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="tcp://HOST:8786", help="join a cluster started with `dask scheduler` / `dask worker`")
    where.add_argument("--local-workers", type=int, metavar="N",
                       help="start a LocalCluster of N worker processes on 127.0.0.1 (the default, with 1 worker)")
    parser.add_argument("--partition-lines", type=int, default=256, metavar="N", help="lines per task (default 256)")
    parser.add_argument("--retries", type=int, default=3, metavar="N", help="run a failed task again up to N times (default 3)")
    parser.add_argument("--restart", action="store_true",
                        help="discard the parts of OUTPUT.parts/ left by a run with another input or other options")
    parser.add_argument("--stats", metavar="FILE.json", help="write counts and timings as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    model = parser.add_argument_group("model (loaded once per worker; ordo's table of model options)")
    model.add_argument("--no-weight-cache", action="store_true", help="pack the weights afresh in each worker")
    decoding = parser.add_argument_group("decoding (ordo's tables of decoding and batching options, as `ordo translate`)")
    decoding.add_argument("--preset", metavar="NAME|FILE", help="decoding defaults, as ordo translate --preset")
    taken = {a for action in parser._actions for a in action.option_strings}
    for spec in table:
        flags = [f.strip() for f in (spec["flag"] or "").split(",") if f.strip() and f.strip() not in taken]
        if not any(f.startswith("--") for f in flags):
            continue  # not a command-line flag of ordo translate either
        help_text = spec["help"] or ""
        if spec["name"] == "threads":
            help_text = "CPU threads per worker (default: the cores / local workers; all cores with --scheduler)"
        group = model if spec["group"] == "model" else decoding
        group.add_argument(*flags, dest="opt_" + spec["name"], type=_value_parser(spec), metavar=spec["metavar"],
                           help=help_text.replace("%", "%%"))
    return parser


def _split_lines(data):
    """The input's lines as ordo translate's LineReader reads them (std::getline: a last line
    without a newline counts, a final newline does not start another; a CR before LF is dropped)."""
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


def _read_input(path):
    if os.path.isdir(path):
        raise UsageError("%s: is a directory, not a text file" % path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError("%s: cannot open input file (%s)" % (path, e.strerror))
    lines = []
    for number, raw in enumerate(_split_lines(data), 1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise UsageError("%s line %d: invalid UTF-8 at byte %d (%s)" % (path, number, e.start + 1, e.reason))
    return data, lines


def _check_output(output, input_path):
    """Refuses, before anything is translated or written, an output the run could not finish
    with: the joined output is written beside it and renamed over it, and its parts go to
    OUTPUT.parts/ in the same folder. The folder's writability is tried by creating (and
    removing) a file there: permission bits do not say it for root, nor on /proc or /sys."""
    if not output or output.endswith(os.sep):
        raise UsageError("%s: the output must name a file" % (output or "''"))
    if os.path.isdir(output):
        raise UsageError("%s: is a directory, not a file" % output)
    if os.path.exists(output) and not os.path.isfile(output):
        raise UsageError("%s: is not a regular file (the output is written beside it and renamed over it)" % output)
    if os.path.exists(output) and os.path.samefile(input_path, output):
        raise UsageError("%s: the output file is the input file; writing it would erase the input (choose another "
                         "--output)" % output)
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise UsageError("%s: cannot create output file (no folder %s)" % (output, folder))
    try:
        fd, probe = tempfile.mkstemp(prefix=os.path.basename(output) + ".", suffix=".probe", dir=folder)
    except OSError as e:
        raise UsageError("%s: cannot create output file (%s)" % (output, e.strerror))
    os.close(fd)
    os.remove(probe)


def _manifest(args, data, lines, options, load_options):
    return {
        "version": MANIFEST_VERSION,
        "input": os.path.abspath(args.input),
        "input_sha256": hashlib.sha256(data).hexdigest(),
        "lines": len(lines),
        "partition_lines": args.partition_lines,
        "model": args.model,
        "compute_type": load_options["compute_type"],
        "preset": args.preset,
        "options": options,
        "nbest": bool(options.get("n_best", 1) > 1),
    }


def _part_path(parts, k):
    return os.path.join(parts, "part-%06d.txt" % k)


def _write_atomically(path, text_or_bytes):
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _prepare_parts(parts, manifest, restart):
    """The partitions OUTPUT.parts/ already holds for this same run; refuses another run's."""
    path = os.path.join(parts, MANIFEST)
    if os.path.isdir(parts) and os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
        except (OSError, ValueError) as e:
            old = {"unreadable": str(e)}
        if old == manifest:
            done = set()
            for name in os.listdir(parts):
                if name.startswith("part-") and name.endswith(".txt"):
                    done.add(int(name[5:-4]))
            return done
        if not restart:
            differ = sorted(k for k in set(old) | set(manifest) if old.get(k) != manifest.get(k))
            raise UsageError(
                "%s holds the parts of another run (it differs in: %s); rerun with --restart to discard "
                "them, or remove the folder" % (parts, ", ".join(differ)))
        shutil.rmtree(parts)
    elif os.path.exists(parts) and not restart:
        raise UsageError("%s exists and is not a parts folder of this command (no %s); remove it or add --restart"
                         % (parts, MANIFEST))
    elif os.path.exists(parts):
        shutil.rmtree(parts) if os.path.isdir(parts) else os.remove(parts)
    os.makedirs(parts)
    _write_atomically(path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return set()


def _log(args, message):
    if not args.quiet:
        print("ordo.distributed: " + message, file=sys.stderr, flush=True)


def _start_cluster(args):
    """(client, cluster or None, threads per worker for ordo)."""
    import logging

    from distributed import Client, LocalCluster

    if args.scheduler:
        try:
            client = Client(args.scheduler, timeout="30s")
        except (OSError, TimeoutError) as e:
            raise UsageError("--scheduler %s: cannot connect (%s)" % (args.scheduler, e))
        return client, None, args.opt_threads if args.opt_threads is not None else 0
    workers = args.local_workers or 1
    threads = args.opt_threads if args.opt_threads is not None else max(1, (os.cpu_count() or 1) // workers)
    # Without Dask's pre-spawn environment for numpy workers: its MALLOC_TRIM_THRESHOLD_ fixes
    # glibc's mmap threshold, so every large tensor is mapped and unmapped again (ordo ran 1.5x
    # slower), and its OMP_NUM_THREADS=1 would cap --threads. The workers run as `ordo` does.
    import dask

    with dask.config.set({"distributed.nanny.pre-spawn-environ": {}}):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster, threads


def _close(client, cluster):
    for thing in (client, cluster):
        if thing is None:
            continue
        try:
            thing.close(timeout=20) if thing is cluster else thing.close()
        except Exception:  # already gone (Ctrl-C reached the workers too): nothing to keep
            pass


def _assemble(parts, count, output):
    tmp = "%s.tmp-%d" % (output, os.getpid())
    try:
        with open(tmp, "wb") as out:
            for k in range(count):
                with open(_part_path(parts, k), "rb") as part:
                    shutil.copyfileobj(part, out)
        os.replace(tmp, output)
    except OSError as e:  # the disk filled, or the output changed since it was checked: the parts stay
        if os.path.exists(tmp):
            os.remove(tmp)
        raise UsageError("%s: cannot write output file (%s); the parts are kept in %s" % (output, e.strerror, parts))


def run(args, table):
    started = time.monotonic()
    if args.partition_lines < 1:
        raise UsageError("--partition-lines must be at least 1", 2)
    if args.retries < 0:
        raise UsageError("--retries must be at least 0", 2)
    if args.local_workers is not None and args.local_workers < 1:
        raise UsageError("--local-workers must be at least 1", 2)
    data, lines = _read_input(args.input)
    _check_output(args.output, args.input)
    given = {"decode": {}, "batch": {}, "model": {}}
    for spec in table:
        value = getattr(args, "opt_" + spec["name"], None)
        if value is not None:
            given[spec["group"]][spec["name"]] = value
    options, batching = given["decode"], given["batch"]
    if args.preset is not None:
        options["preset"] = args.preset
    load_options = dict(given["model"])
    load_options.setdefault("compute_type", "float32")
    load_options.pop("threads", None)  # per worker: set once the cluster is known
    if args.no_weight_cache:
        load_options["weight_cache"] = False
    manifest = _manifest(args, data, lines, options, load_options)
    nbest = manifest["nbest"]

    parts = args.output + ".parts"
    count = (len(lines) + args.partition_lines - 1) // args.partition_lines
    done = _prepare_parts(parts, manifest, args.restart)
    todo = [k for k in range(count) if k not in done]
    stats = {"partitions": count, "kept": count - len(todo), "translated": 0, "failed": 0, "lines": len(lines),
             "lines_translated": 0, "workers": 0, "model_loads": {}, "partitions_by_worker": {}, "seconds": 0.0,
             "seconds_translating": None, "lines_per_second": None, "interrupted": False}
    _log(args, "%d lines, %d partitions of %d lines: %d kept in %s, %d to translate"
         % (len(lines), count, args.partition_lines, stats["kept"], parts, len(todo)))
    failed_lines = []
    failed_parts = []
    if todo:
        client = cluster = None
        pending = {}  # future -> partition

        def count_load(result):  # model loads per worker process: one each, however many tasks
            if result["loaded"]:
                pid = str(result["pid"])
                stats["model_loads"][pid] = stats["model_loads"].get(pid, 0) + 1

        try:
            client, cluster, threads = _start_cluster(args)
            load_options["threads"] = threads
            stats["workers"] = len(client.scheduler_info().get("workers", {}))
            if args.scheduler and stats["workers"] == 0:
                _log(args, "no worker has joined %s yet; waiting for one" % args.scheduler)
            from distributed import as_completed

            first_line = next((line for k in todo for line in
                               lines[k * args.partition_lines:(k + 1) * args.partition_lines] if line), "")
            run_options = dict(options, **batching)
            check = client.submit(check_settings, args.model, load_options, run_options, first_line,
                                  pure=False, retries=args.retries).result()
            count_load(check)
            if check["error"]:
                raise UsageError(check["error"])
            translating = time.monotonic()
            window = max(4, 3 * max(1, sum(client.nthreads().values())))
            queue = list(todo)

            def submit(k):
                begin = k * args.partition_lines
                future = client.submit(translate_partition, args.model, load_options, run_options, begin,
                                       lines[begin:begin + args.partition_lines], nbest, args.input,
                                       pure=False, retries=args.retries)
                pending[future] = k
                return future

            for _ in range(min(window, len(queue))):
                submit(queue.pop(0))
            finished = as_completed(list(pending))
            for future in finished:
                k = pending.pop(future)
                try:
                    result = future.result()
                except Exception as e:  # after the retries, or a task that killed too many workers
                    failed_parts.append(k)
                    stats["failed"] += 1
                    print("%s: error: partition %d (lines %d-%d): %s: %s"
                          % (PROG, k, k * args.partition_lines + 1, min(len(lines), (k + 1) * args.partition_lines),
                             type(e).__name__, e), file=sys.stderr, flush=True)
                else:
                    if result["errors"]:  # first: a part file is only kept with its errors
                        _write_atomically(_part_path(parts, k)[:-4] + ".errors.json", json.dumps(result["errors"]))
                    _write_atomically(_part_path(parts, k), result["text"])
                    stats["translated"] += 1
                    stats["lines_translated"] += len(lines[k * args.partition_lines:(k + 1) * args.partition_lines])
                    count_load(result)
                    pid = str(result["pid"])
                    stats["partitions_by_worker"][pid] = stats["partitions_by_worker"].get(pid, 0) + 1
                    for number, message in result["errors"]:
                        failed_lines.append(number)
                        print("ordo: error: " + message, file=sys.stderr, flush=True)
                    _log(args, "partition %d done (%d of %d)" % (k, count - len(todo) + stats["translated"], count))
                future.release()
                if queue:
                    finished.add(submit(queue.pop(0)))
            stats["workers"] = max(stats["workers"], len(client.scheduler_info().get("workers", {})))
            stats["seconds_translating"] = round(time.monotonic() - translating, 3)
        except KeyboardInterrupt:
            stats["interrupted"] = True
            have = sum(1 for k in range(count) if os.path.exists(_part_path(parts, k)))
            print("%s: interrupted: %d of %d partitions are done and kept in %s; run the same command again to "
                  "translate the rest" % (PROG, have, count, parts), file=sys.stderr, flush=True)
            if client is not None:
                try:
                    client.cancel(list(pending))
                except Exception:
                    pass
            _write_stats(args, stats, started)
            return 130
        finally:
            _close(client, cluster)
    # Inputs that failed on their own (an empty line each, as ordo translate gives them), also
    # those of partitions kept from an earlier run: reported again, and the exit status says so.
    for k in sorted(done):
        path = _part_path(parts, k)[:-4] + ".errors.json"
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for number, message in json.load(f):
                    failed_lines.append(number)
                    print("ordo: error: " + message, file=sys.stderr, flush=True)
    if failed_parts:
        _write_stats(args, stats, started)
        print("%s: %d partitions failed; the %d done are kept in %s: run the same command again"
              % (PROG, len(failed_parts), count - len(failed_parts), parts), file=sys.stderr)
        return 1
    _assemble(parts, count, args.output)
    shutil.rmtree(parts, ignore_errors=True)
    _write_stats(args, stats, started)
    _log(args, "wrote %s: %d lines in %.1f s" % (args.output, len(lines), stats["seconds"]))
    return 1 if failed_lines else 0


def _write_stats(args, stats, started):
    stats["seconds"] = round(time.monotonic() - started, 3)
    if stats["lines_translated"] and stats["seconds"] > 0:
        stats["lines_per_second"] = round(stats["lines_translated"] / stats["seconds"], 2)
    if args.stats:
        _write_atomically(args.stats, json.dumps(stats, indent=1, sort_keys=True) + "\n")


def _interrupt(signum, frame):
    raise KeyboardInterrupt()


def main(argv=None):
    try:
        import ordo  # noqa: F401  (the package this module belongs to: its table, its Translator)

        table = _option_table()
    except (ImportError, AttributeError) as e:
        print("%s: error: the ordo package is incomplete (%s)" % (PROG, e), file=sys.stderr)
        return 1
    args = build_parser(table).parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)  # a `kill` stops as Ctrl-C does: finished parts kept
    try:
        return run(args, table)
    except UsageError as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print("%s: interrupted" % PROG, file=sys.stderr)
        return 130


if __name__ == "__main__":
    # Run the module's own copy (ordo.distributed), not this __main__ one: Dask pickles the task
    # functions by reference to it, so a worker's cache of loaded models is its module's.
    from ordo.distributed import main as _main

    sys.exit(_main())
