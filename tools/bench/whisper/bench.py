#!/usr/bin/python3
"""Whisper speed: ordo against CTranslate2 4.8.1 and whisper.cpp, same checkpoints, same clip.

A measuring tool, never part of ordo. One command, on a quiet machine:

  /usr/bin/python3 tools/bench/whisper/bench.py            # tiny, base, small x float32, int8 x 1, 2 threads
  /usr/bin/python3 tools/bench/whisper/bench.py --quick    # tiny only, the 60 s clip, one run: does it work?

For each cell (model x compute type x threads) the engines run interleaved, each run a fresh process
timed from start to exit (loading, reading the WAV, features, encoder, decoding, writing the
transcript): ordo, CTranslate2, whisper.cpp, then again, --runs times (fewer when another round
would take a cell past --cell-minutes: small's rounds are long); the tables give medians and n.
Per engine: the real-time factor (wall seconds / audio seconds; < 1 is faster than real time), the
30 s windows decoded, the tokens generated and tokens per wall second (so that a difference in
windows or tokens cannot hide), peak RSS (GNU time's %M) and CPU seconds (user + system; neighbours
disturb them less than wall time). Before a cell's timed runs, each engine runs once untimed on a
25 s clip (one window everywhere): a warm-up (ordo writes its packed weights cache, every file comes
into the page cache) that also checks each engine generates exactly --text-tokens tokens in a window.
It refuses to start while the 1-minute load average is 1.5 or more (--force runs anyway and says so).

The same decoding everywhere: greedy, English, transcribe, no timestamps, no temperature fallback,
no previous-text prompt, independent 30 s windows, and exactly L = --text-tokens new tokens per
window: the checkpoints' <|endoftext|> is never chosen (make_models.py) and each engine's cap is L:
  ordo         build/ordo transcribe --no-timestamps -b 1 --temperature 0, thresholds off,
               --max-length L+3 (as transformers' max_new_tokens: the forced <|en|><|transcribe|>
               <|notimestamps|> count), --batch-size 32, verbose_json. Its windows are transformers'
               ASR pipeline's (chunk_length_s=30, 5 s of stride on each side: a window every 20 s, 30
               windows for 600 s), their tokens merged where they overlap, so its output holds fewer
               tokens than it generated: generated = windows x L (the warm-up checks L per window).
  CTranslate2  ct2_whisper.py run: its Whisper.generate on batches of 32 windows, max_length 2 L
               (CTranslate2 decodes at most max_length / 2 new tokens), log-mel by numpy in the same
               process (counted in its time, and shown apart in the last table). --windows
               overlapping (default): ordo's windows, the same work as ordo; fixed: back to back.
  whisper.cpp  whisper-cli -bs 1 -nf -mc 0 -nt -l en -mt L-1 -ojf (--max-tokens: a flag for the
               library's whisper_full_params.max_tokens, the only change to its CLI; it stops after
               token L; -ojf writes the token ids that are counted): 30 s windows back to back, one
               after another (its design; 20 windows for 600 s).
So the windows differ between engines; tokens per second (= windows x L / wall s) is the figure to
compare, and the ratios are ordo's tokens/s over the peer's.
Compute types: float32 is float32 in all three (whisper.cpp's f32 file); int8 is ordo's and
CTranslate2's int8 and whisper.cpp's q8_0 (8-bit weights in blocks of 32, made from its f16 file
by its own whisper-quantize). CTranslate2 runs at its best setting: per cell, each of
CT2_FORCE_CPU_ISA AVX2/AVX512 x OMP_WAIT_POLICY active/passive once on the 60 s clip, the fastest
kept (--ct2-setting ISA,POLICY fixes it instead).
Timestamp mode is not measured: on random weights the timestamp tokens are random too, so where
each engine seeks, how many windows it decodes and how many tokens a window keeps would differ by
chance, not by engine.

Everything missing is made first (idempotent): the HF folders (make_models.py), the clips
(make_clip.sh), CTranslate2's conversions (ct2_whisper.py convert), whisper.cpp's (its
models/convert-h5-to-ggml.py, whisper-quantize). --peers holds the peers as docs/benchmarks.md
builds them: src/whisper.cpp/build/bin/whisper-cli, src/openai-whisper/whisper/assets, pylib/
(ctranslate2) and hf-pylib/ (transformers 4.31). Each run's record goes to --work/results/*.jsonl.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, HERE)
from ct2_whisper import SAMPLE_RATE, window_plan  # noqa: E402  (numpy only; the windows ordo decodes)

ENGINES = ("ordo", "ct2", "whispercpp")
LABELS = {"ordo": "ordo", "ct2": "CTranslate2 4.8.1", "whispercpp": "whisper.cpp"}
SHAPES = ("tiny", "base", "small")
COMPUTE_TYPES = ("float32", "int8")
GGML_FILE = {"float32": "ggml-model-f32.bin", "int8": "ggml-model-q8_0.bin"}
EOT = 50257  # counted tokens: text, ids below <|endoftext|>
CT2_SETTINGS = [("AVX512", "active"), ("AVX512", "passive"), ("AVX2", "active"), ("AVX2", "passive")]


def counted(ids):
    return sum(1 for i in ids if i < EOT)


class Paths:
    def __init__(self, args):
        self.work, self.peers, self.ordo = args.work, args.peers, args.ordo
        self.whisper_cpp = os.path.join(args.peers, "src", "whisper.cpp")
        self.cli = os.path.join(self.whisper_cpp, "build", "bin", "whisper-cli")
        self.quantize = os.path.join(self.whisper_cpp, "build", "bin", "whisper-quantize")
        self.openai_whisper = os.path.join(args.peers, "src", "openai-whisper")
        self.mel_filters = os.path.join(self.openai_whisper, "whisper", "assets", "mel_filters.npz")
        self.pylib = os.path.join(args.peers, "pylib")
        self.hf_pylib = os.path.join(args.peers, "hf-pylib")

    def clip(self, name):
        return os.path.join(self.work, name)

    def hf(self, shape):
        return os.path.join(self.work, shape)

    def ct2(self, shape, compute):
        return os.path.join(self.work, "ct2", f"{shape}-{compute}")

    def ggml(self, shape, compute):
        return os.path.join(self.work, "ggml", shape, GGML_FILE[compute])


def nice_run(cmd, env=None):
    p = subprocess.run(["nice", "-n", "10"] + cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench.py: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-3000:]}")


def prepare(paths, shapes, computes):
    """Makes what is missing: clips, checkpoints, the peers' conversions."""
    hf_env = dict(os.environ, PYTHONPATH=paths.hf_pylib, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if not all(os.path.exists(paths.clip(c)) for c in ("clip10m.wav", "clip60s.wav", "clip25s.wav")):
        nice_run(["sh", os.path.join(HERE, "make_clip.sh"), paths.clip("clip10m.wav")])
    missing = [s for s in shapes if not os.path.exists(os.path.join(paths.hf(s), "model.safetensors"))]
    if missing:
        nice_run([sys.executable, os.path.join(HERE, "make_models.py"), "--out", paths.work, "--shapes",
                  ",".join(missing)], env=hf_env)
    ct2_env = dict(hf_env, PYTHONPATH=paths.pylib + os.pathsep + paths.hf_pylib)
    converter = os.path.join(paths.whisper_cpp, "models", "convert-h5-to-ggml.py")
    for s in shapes:
        for c in computes:
            if not os.path.exists(os.path.join(paths.ct2(s, c), "model.bin")):
                nice_run([sys.executable, os.path.join(HERE, "ct2_whisper.py"), "convert", paths.hf(s), paths.ct2(s, c),
                          c], env=ct2_env)
        out = os.path.dirname(paths.ggml(s, "float32"))
        os.makedirs(out, exist_ok=True)
        if "float32" in computes and not os.path.exists(paths.ggml(s, "float32")):
            nice_run([sys.executable, converter, paths.hf(s), paths.openai_whisper, out, "use-f32"], env=hf_env)
        if "int8" in computes and not os.path.exists(paths.ggml(s, "int8")):
            f16 = os.path.join(out, "ggml-model.bin")
            if not os.path.exists(f16):
                nice_run([sys.executable, converter, paths.hf(s), paths.openai_whisper, out], env=hf_env)
            nice_run([paths.quantize, f16, paths.ggml(s, "int8"), "q8_0"])


def timed(cmd, env, timeout, cwd):
    """Runs cmd under GNU time: wall seconds, peak RSS MB, CPU seconds, stdout, stderr."""
    stats = os.path.join(cwd, "time.txt")
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-o", stats, "-f", "%M %U %S"] + cmd, env=env, cwd=cwd, timeout=timeout,
                       capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise SystemExit(f"bench.py: {' '.join(cmd)} exited with {p.returncode}:\n{p.stderr[-3000:]}")
    with open(stats) as f:
        rss_kb, user, system = f.read().strip().splitlines()[-1].split()
    return {"wall_s": wall, "rss_mb": int(rss_kb) / 1024, "cpu_s": float(user) + float(system), "stdout": p.stdout,
            "stderr": p.stderr}


def run_ordo(paths, shape, compute, threads, clip, args, tmp):
    out = os.path.join(tmp, "ordo.json")
    cmd = [paths.ordo, "transcribe", "-m", paths.hf(shape), clip, "--language", "en", "--task", "transcribe",
           "-b", "1", "--temperature", "0", "--compression-ratio-threshold", "off", "--logprob-threshold", "off",
           "--no-speech-threshold", "off", "--max-length", str(args.text_tokens + 3), "--compute-type", compute,
           "-t", str(threads), "--batch-size", str(args.batch_size), "--format", "verbose_json", "-o", out, "-q",
           "--no-timestamps"]
    r = timed(cmd, dict(os.environ), args.timeout, tmp)
    with open(out) as f:
        r["tokens_out"] = sum(counted(s["tokens"]) for s in json.load(f)["segments"])
    with wave.open(clip, "rb") as w:
        r["windows"] = len(window_plan(w.getnframes(), True))
    # Overlapping windows' tokens are merged in the output: count what was generated.
    r["tokens"] = r["windows"] * args.text_tokens if r["windows"] > 1 else r["tokens_out"]
    return r


def run_ct2(paths, shape, compute, threads, clip, args, tmp, setting):
    env = dict(os.environ, PYTHONPATH=paths.pylib, CT2_FORCE_CPU_ISA=setting[0], OMP_WAIT_POLICY=setting[1])
    cmd = [sys.executable, os.path.join(HERE, "ct2_whisper.py"), "run", paths.ct2(shape, compute), clip,
           "--compute-type", compute, "--threads", str(threads), "--batch-size", str(args.batch_size),
           "--text-tokens", str(args.text_tokens), "--windows", args.windows, "--mel-filters", paths.mel_filters]
    r = timed(cmd, env, args.timeout, tmp)
    inner = json.loads(r["stdout"].strip().splitlines()[-1])
    r.update(tokens=inner["tokens"], windows=inner["windows"], load_s=inner["load_s"], features_s=inner["features_s"],
             generate_s=inner["generate_s"], setting=f"{setting[0]}, {setting[1]}")
    return r


def run_whispercpp(paths, shape, compute, threads, clip, args, tmp):
    base = os.path.join(tmp, "wcpp")
    cmd = [paths.cli, "-m", paths.ggml(shape, compute), "-f", clip, "-t", str(threads), "-l", "en", "-bs", "1", "-nf",
           "-mt", str(args.text_tokens - 1), "-nt", "-mc", "0", "-ojf", "-of", base]
    r = timed(cmd, dict(os.environ), args.timeout, tmp)
    with open(base + ".json") as f:
        r["tokens"] = sum(counted(tok["id"] for tok in s["tokens"]) for s in json.load(f)["transcription"])
    encodes = [line for line in r["stderr"].splitlines() if "encode time" in line]  # "... / 20 runs (...)"
    r["windows"] = int(encodes[-1].split("/")[1].split()[0]) if encodes else None
    return r


def run_engine(engine, paths, shape, compute, threads, clip, args, ct2_setting):
    with tempfile.TemporaryDirectory(prefix="whisper-bench-") as tmp:
        if engine == "ordo":
            r = run_ordo(paths, shape, compute, threads, clip, args, tmp)
        elif engine == "ct2":
            r = run_ct2(paths, shape, compute, threads, clip, args, tmp, ct2_setting)
        else:
            r = run_whispercpp(paths, shape, compute, threads, clip, args, tmp)
    del r["stdout"], r["stderr"]
    return r


def fixed_ct2_setting(args):
    if not args.ct2_setting:
        return None
    isa, policy = args.ct2_setting.split(",")
    return (isa, policy)


def best_ct2_setting(paths, shape, compute, threads, args):
    """The fastest CTranslate2 setting for this cell on the 60 s clip (one run each, after the warm-up)."""
    if args.ct2_setting:
        return fixed_ct2_setting(args)
    clip = paths.clip("clip60s.wav")
    walls = {s: run_engine("ct2", paths, shape, compute, threads, clip, args, s)["wall_s"] for s in CT2_SETTINGS}
    best = min(walls, key=walls.get)
    print("  CTranslate2 on the 60 s clip: " + ", ".join(f"{s[0]}/{s[1]} {w:.2f} s" for s, w in walls.items())
          + f" -> {best[0]}/{best[1]}", file=sys.stderr, flush=True)
    return best


def warm_up(paths, shape, compute, threads, args, setting):
    """One untimed run of each engine on the 25 s clip (one window): L tokens each, or stop."""
    for engine in args.engines:
        r = run_engine(engine, paths, shape, compute, threads, paths.clip("clip25s.wav"), args, setting)
        if (r["windows"], r["tokens"]) != (1, args.text_tokens):
            raise SystemExit(f"bench.py: {engine} generated {r['tokens']} tokens in {r['windows']} window(s) of the "
                             f"25 s clip, not {args.text_tokens} in 1: its cap or the checkpoint is not as expected")


def machine():
    name, family, model = "unknown CPU", "?", "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                break
            key, _, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if key == "model name":
                name = value
            elif key == "cpu family":
                family = value
            elif key == "model":
                model = value
    return f"{name} (family {family}, model {model}), {os.cpu_count()} cores"


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def tables(results, args, seconds):
    """Markdown: per engine (RTF, windows, tokens, tok/s, memory), the ratios, CTranslate2's parts."""
    cells = []
    for r in results:
        if (r["model"], r["compute"], r["threads"]) not in cells:
            cells.append((r["model"], r["compute"], r["threads"]))
    rows_out = ["| model | compute | threads | engine | RTF | windows | tokens | tok/s | peak RSS MB | CPU s | "
                "wall s (min-max) | n | load |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    ratios = ["| model | compute | threads | ordo ÷ CTranslate2 | ordo ÷ whisper.cpp |", "|---|---|---|---:|---:|"]
    parts = ["| model | compute | threads | setting | load s | WAV + features s | generate s | whole process s |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for cell in cells:
        speed = {}
        for engine in args.engines:
            rows = [r for r in results if (r["model"], r["compute"], r["threads"]) == cell and r["engine"] == engine]
            if not rows:
                continue
            wall = med(rows, "wall_s")
            speed[engine] = med(rows, "tokens") / wall
            windows = "/".join(str(w) for w in sorted({r["windows"] for r in rows if r["windows"] is not None})) or "?"
            tokens = "/".join(str(t) for t in sorted({r["tokens"] for r in rows}))
            walls, loads = [r["wall_s"] for r in rows], [r["load"] for r in rows]
            rows_out.append(" | ".join([
                f"| {cell[0]}", cell[1], str(cell[2]), LABELS[engine], f"{wall / seconds:.3f}", windows, tokens,
                f"{speed[engine]:.1f}", f"{med(rows, 'rss_mb'):.0f}", f"{med(rows, 'cpu_s'):.1f}",
                f"{wall:.2f} ({min(walls):.2f}-{max(walls):.2f})", str(len(rows)),
                f"{min(loads):.2f}-{max(loads):.2f} |"]))
            if engine == "ct2":
                parts.append(" | ".join([
                    f"| {cell[0]}", cell[1], str(cell[2]), rows[0]["setting"], f"{med(rows, 'load_s'):.2f}",
                    f"{med(rows, 'features_s'):.2f}", f"{med(rows, 'generate_s'):.2f}", f"{wall:.2f} |"]))
        if "ordo" in speed:
            ratio = {e: f"{speed['ordo'] / speed[e]:.2f}" if e in speed else "–" for e in ("ct2", "whispercpp")}
            ratios.append(f"| {cell[0]} | {cell[1]} | {cell[2]} | {ratio['ct2']} | {ratio['whispercpp']} |")
    text = "\n".join(rows_out) + "\n"
    if "ordo" in args.engines and len(args.engines) > 1:
        text += ("\nordo's tokens/s ÷ the peer's (> 1: ordo faster; tokens = windows × "
                 f"{args.text_tokens}, so this is the ratio of time per window):\n\n" + "\n".join(ratios) + "\n")
    if "ct2" in args.engines:
        text += ("\nCTranslate2's process in parts (medians): import and model load; reading the WAV and the log-mel "
                 "features (numpy); generate:\n\n" + "\n".join(parts) + "\n")
    return text


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--quick", action="store_true", help="tiny only, the 60 s clip, 1 run")
    p.add_argument("--models", default=",".join(SHAPES))
    p.add_argument("--compute-types", default=",".join(COMPUTE_TYPES))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--engines", default=",".join(ENGINES), help="ordo, ct2, whispercpp")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--text-tokens", type=int, default=100, help="new tokens per 30 s window, every engine")
    p.add_argument("--batch-size", type=int, default=32, help="windows per batch (ordo, CTranslate2)")
    p.add_argument("--windows", choices=["overlapping", "fixed"], default="overlapping",
                   help="CTranslate2's windows: ordo's (one every 20 s) or back to back")
    p.add_argument("--clip", help="16 kHz mono s16 WAV (default: --work/clip10m.wav, --quick: clip60s.wav)")
    p.add_argument("--work", default="/work/peers/whisper-bench", help="checkpoints, conversions, clips, results")
    p.add_argument("--peers", default="/work/peers")
    p.add_argument("--ordo", default=os.path.join(ROOT, "build", "ordo"))
    p.add_argument("--ct2-setting", help="ISA,POLICY (e.g. AVX512,active) instead of the fastest of four per cell")
    p.add_argument("--timeout", type=int, default=1800, help="seconds a run may take")
    p.add_argument("--cell-minutes", type=float, default=30,
                   help="a cell's further rounds start only if they end within this (its first always runs)")
    p.add_argument("--max-minutes", type=float, default=0, help="past this, no further rounds start (0: no limit)")
    p.add_argument("--force", action="store_true", help="run even when the machine is busy")
    p.add_argument("--prepare-only", action="store_true", help="make the checkpoints, clips and conversions, then stop")
    args = p.parse_args()
    if args.quick:
        args.models, args.runs = "tiny", 1
    args.engines = args.engines.split(",")
    shapes, computes = args.models.split(","), args.compute_types.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    for name, values, known in (("engine", args.engines, ENGINES), ("model", shapes, SHAPES),
                                ("compute type", computes, COMPUTE_TYPES)):
        bad = [v for v in values if v not in known]
        if bad:
            p.error(f"unknown {name} {', '.join(bad)}; known: {', '.join(known)}")
    if args.ct2_setting and tuple(args.ct2_setting.split(",")) not in CT2_SETTINGS:
        p.error(f"--ct2-setting {args.ct2_setting}: one of " + " ".join(",".join(c) for c in CT2_SETTINGS))
    paths = Paths(args)
    clip = args.clip or paths.clip("clip60s.wav" if args.quick else "clip10m.wav")
    if not os.access(paths.quantize, os.X_OK) or not os.access(paths.cli, os.X_OK):
        p.error(f"no {paths.cli} or whisper-quantize: build whisper.cpp as docs/benchmarks.md says")
    if args.prepare_only:
        prepare(paths, shapes, computes)
        return
    if "ordo" in args.engines and not os.access(paths.ordo, os.X_OK):
        p.error(f"no {paths.ordo} (build ordo, or --engines ct2,whispercpp)")

    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.2f}", file=sys.stderr)
    if load >= 1.5 and not args.force:
        raise SystemExit(f"bench.py: the 1-minute load average is {load:.2f} (>= 1.5): the machine is busy; wait, or "
                         f"pass --force (the figures are then not comparable)")
    prepare(paths, shapes, computes)
    with wave.open(clip, "rb") as w:
        seconds = w.getnframes() / SAMPLE_RATE
    os.makedirs(os.path.join(args.work, "results"), exist_ok=True)
    started = time.gmtime()
    log_path = os.path.join(args.work, "results", time.strftime("%Y%m%d-%H%M%S", started) + ".jsonl")
    deadline = time.monotonic() + args.max_minutes * 60 if args.max_minutes > 0 else None
    results = []
    with open(log_path, "w") as log:
        for shape in shapes:
            for compute in computes:
                for n in threads:
                    print(f"{shape} {compute} {n} thread(s)", file=sys.stderr, flush=True)
                    warm_up(paths, shape, compute, n, args, fixed_ct2_setting(args) or CT2_SETTINGS[0])
                    setting = best_ct2_setting(paths, shape, compute, n, args) if "ct2" in args.engines else None
                    cell_start = time.monotonic()
                    for run in range(args.runs):
                        now = time.monotonic()
                        round_s = (now - cell_start) / run if run else 0.0
                        if run and (now + round_s > cell_start + args.cell_minutes * 60
                                    or (deadline is not None and now > deadline)):
                            break
                        for engine in args.engines:
                            r = run_engine(engine, paths, shape, compute, n, clip, args, setting)
                            r.update(engine=engine, model=shape, compute=compute, threads=n, run=run,
                                     load=os.getloadavg()[0])
                            results.append(r)
                            log.write(json.dumps(r) + "\n")
                            log.flush()
                            print(f"  {engine}: {r['wall_s']:.2f} s, {r['windows']} windows, {r['tokens']} tokens, "
                                  f"{r['rss_mb']:.0f} MB", file=sys.stderr, flush=True)

    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d %H:%M UTC', started)}; load average at start {load:.2f}"
          + (" (--force: the machine was busy)" if load >= 1.5 else ""))
    for name in ("CTranslate2", "whisper.cpp"):
        stamp = os.path.join(args.peers, "src", name, "COMMIT")
        if os.path.exists(stamp):
            with open(stamp) as f:
                print(f"{name}: {f.read().strip()}")
    print()
    print(f"clip: {os.path.basename(clip)}, {seconds:.1f} s of English speech (espeak-ng); greedy, no timestamps, "
          f"independent windows, {args.text_tokens} new tokens per 30 s window (CTranslate2's windows: "
          f"{args.windows}); "
          f"medians of up to {args.runs} interleaved runs (n), each a fresh process; RTF = wall s / {seconds:.0f} s; "
          f"tok/s = generated tokens / wall s. Results: {log_path}")
    print()
    print(tables(results, args, seconds))


if __name__ == "__main__":
    main()
