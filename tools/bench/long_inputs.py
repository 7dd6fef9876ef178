#!/usr/bin/python3
"""Long inputs: the time and peak memory of one encoder pass over 1,024 to 16,384 tokens, ordo
against Hugging Face transformers 4.31 eager (never part of ordo; a measuring tool).

  long_inputs.py [--families led,longt5,pegasus_x] [--sizes 1024,4096,16384] [--engines ordo,hf]
                 [--repeats 3] [--threads 2] [--cache /work/peers/long-bench] [--tokenizers DIR]
                 [--hf-path /work/peers/hf-pylib] [--ordo-path build/python] [--force]

For each family a random checkpoint of the base model's shape (allenai/led-base-16384,
google/long-t5-tglobal-base, google/pegasus-x-base) is made once with transformers into
--cache/<family>/, with the tokenizer files of the matching test fixture (--tokenizers/<fixture>).
Then for each size N and each repeat, the engines run interleaved (ordo, hf, ordo, hf, ...), each
measurement in a fresh child process whose ru_maxrss (os.wait4) is the peak memory:

- hf: model.get_encoder()(input_ids, attention_mask[, global_attention_mask on the first token for
  LED]) under torch.inference_mode(), torch.set_num_threads(--threads); the encoder pass alone.
- ordo: the Python package (`import ordo`, --ordo-path) generating 1 new token (greedy) from a
  source of exactly N tokens: tokenization, the encoder and one decoder step, nothing subtracted.

Both engines get the same N-token source: words that are one token each in the fixture's
tokenizer, so ordo's own tokenization gives N ids too (checked). Each child first runs a 64-token
warm-up; the time is the N-token call alone. The table gives medians over the repeats. The machine
must be quiet: it refuses to start while the 1-minute load average is 1.5 or more (--force runs
anyway and says so).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
WARMUP_TOKENS = 64

# The base models' shapes (their config.json), random weights.
FAMILIES = {
    "led": {
        "fixture": "led", "like": "allenai/led-base-16384", "class": "LEDForConditionalGeneration",
        "config": dict(model_type="led", vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6,
                       encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
                       decoder_ffn_dim=3072, attention_window=[1024] * 6, max_encoder_position_embeddings=16384,
                       max_decoder_position_embeddings=1024, activation_function="gelu", pad_token_id=1,
                       bos_token_id=0, eos_token_id=2, decoder_start_token_id=2),
    },
    "longt5": {
        "fixture": "longt5", "like": "google/long-t5-tglobal-base", "class": "LongT5ForConditionalGeneration",
        # n_positions is not read by transformers' LongT5; 16384 tells ordo the source may be that long.
        "config": dict(model_type="longt5", vocab_size=32128, d_model=768, d_kv=64, d_ff=2048, num_layers=12,
                       num_decoder_layers=12, num_heads=12, encoder_attention_type="transient-global",
                       local_radius=127, global_block_size=16, feed_forward_proj="gated-gelu",
                       tie_word_embeddings=False, relative_attention_num_buckets=32,
                       relative_attention_max_distance=128, n_positions=16384, pad_token_id=0, eos_token_id=1,
                       decoder_start_token_id=0),
    },
    "pegasus_x": {
        "fixture": "pegasus_x", "like": "google/pegasus-x-base", "class": "PegasusXForConditionalGeneration",
        "config": dict(model_type="pegasus_x", vocab_size=96103, d_model=768, encoder_layers=12, decoder_layers=12,
                       encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
                       decoder_ffn_dim=3072, block_size=512, num_global_tokens=128, stagger_local_blocks=True,
                       max_position_embeddings=16384, pad_token_id=0, eos_token_id=1, forced_eos_token_id=1,
                       decoder_start_token_id=0),
    },
}
# Candidate words; those that are one token (with a leading space) in the tokenizer make the source.
WORDS = ("the of and to in is was for on with as by at from that this it an be are were his her they "
         "which also their has had its but not one new first two after time year years city people "
         "world state school river house water north south music film team game family war city").split()


def add_added_token_str():
    """transformers 4.31 without `tokenizers`: give the stand-in AddedToken the real one's str/eq/hash."""
    from transformers import tokenization_utils_base as tub
    if not tub.is_tokenizers_available():
        tub.AddedToken.__str__ = lambda self: self.content
        tub.AddedToken.__eq__ = lambda self, other: str(self) == str(other)
        tub.AddedToken.__hash__ = lambda self: hash(self.content)


def source(folder, n):
    """(ids, text): n ids with the tokenizer's special tokens, and the text that tokenizes to them."""
    from transformers import AutoTokenizer
    add_added_token_str()
    tok = AutoTokenizer.from_pretrained(folder, use_fast=False)
    specials = len(tok("").input_ids)
    words = []
    for w in WORDS:
        ids = tok(" " + w, add_special_tokens=False).input_ids
        if len(ids) == 1 and tok("a " + w, add_special_tokens=False).input_ids[-1] == ids[0] and w not in words:
            words.append(w)
    text = " ".join(words[i % len(words)] for i in range(n - specials))
    ids = tok(text).input_ids
    if len(ids) != n:
        raise SystemExit(f"long_inputs.py: {folder}: the text tokenizes to {len(ids)} ids, not {n}")
    return ids, text


def make_checkpoint(family, cache, tokenizers):
    spec = FAMILIES[family]
    folder = os.path.join(cache, family)
    if os.path.exists(os.path.join(folder, "model.safetensors")):
        return folder
    import torch
    import transformers
    add_added_token_str()
    print(f"making {folder} (random weights, the shape of {spec['like']})", flush=True)
    torch.manual_seed(0)
    config = transformers.AutoConfig.for_model(**spec["config"])
    model = getattr(transformers, spec["class"])(config).eval()
    tmp = folder + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    src = os.path.join(tokenizers, spec["fixture"])
    for f in sorted(os.listdir(src)):
        if f not in ("config.json", "generation_config.json", "model.safetensors", "golden.json", "attention.json"):
            shutil.copyfile(os.path.join(src, f), os.path.join(tmp, f))
    os.replace(tmp, folder)
    return folder


def source_file(folder, n):
    """The N-token source as a file (made once), so that a child needs no tokenizer of transformers."""
    path = os.path.join(folder, f"source-{n}.json")
    if not os.path.exists(path):
        ids, text = source(folder, n)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"ids": ids, "text": text}, f)
    return path


def child(args):
    """One measurement in this (fresh) process: prints one JSON line."""
    import resource

    def status_mb(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
        return None

    def before_pass():
        """The RSS now and the peak so far (loading dominates it), then the peak reset for the pass alone."""
        out["load_peak_mb"] = max(status_mb("VmHWM") or 0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        out["rss_before_mb"] = status_mb("VmRSS")
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM (and ru_maxrss) to the current RSS
            out["hwm_reset"] = True
        except OSError:
            out["hwm_reset"] = False

    def after_pass():
        out["pass_peak_mb"] = status_mb("VmHWM") if out["hwm_reset"] else None
        out["peak_rss_mb"] = max(out["load_peak_mb"], out["pass_peak_mb"] or 0,
                                 resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)

    def load(n):
        with open(os.path.join(args.folder, f"source-{n}.json"), encoding="utf-8") as f:
            d = json.load(f)
        return d["ids"], d["text"]

    ids, text = load(args.n)
    warm_ids, warm_text = load(WARMUP_TOKENS)
    out = {"engine": args.child, "n": args.n}
    if args.child == "hf":
        import torch
        import transformers
        torch.set_num_threads(args.threads)
        model = transformers.AutoModelForSeq2SeqLM.from_pretrained(args.folder, torch_dtype=torch.float32).eval()
        encoder = model.get_encoder()

        def run(batch_ids):
            x = torch.tensor([batch_ids])
            kw = {"attention_mask": torch.ones_like(x)}
            if model.config.model_type == "led":
                g = torch.zeros_like(x)
                g[:, 0] = 1
                kw["global_attention_mask"] = g
            with torch.inference_mode():
                return encoder(x, **kw).last_hidden_state.shape[1]

        run(warm_ids)
        before_pass()
        t0 = time.perf_counter()
        length = run(ids)
        out["seconds"] = time.perf_counter() - t0
        after_pass()
        out["source_tokens"] = length
    else:
        import ordo
        translator = ordo.Translator(args.folder, threads=args.threads, weight_cache=args.weight_cache)
        options = dict(beam_size=1, max_new_tokens=1, min_new_tokens=0, min_length=0)
        translator.translate_batch([warm_text], **options)
        before_pass()
        t0 = time.perf_counter()
        result = translator.translate_batch([text], **options)[0]
        out["seconds"] = time.perf_counter() - t0
        after_pass()
        out["truncated_tokens"] = result.truncated_tokens
        if args.verify:
            # source_ids are filled when attention is asked for: one more, untimed call, after the measurements.
            checked = translator.translate_batch([text], return_attention=True, **options)[0]
            out["source_tokens"] = len(checked.source_ids)
            if len(checked.source_ids) != args.n or checked.truncated_tokens:
                out["error"] = (f"ordo encoded {len(checked.source_ids)} ids ({checked.truncated_tokens} truncated), "
                                f"not {args.n}")
        elif result.truncated_tokens:
            out["error"] = f"ordo truncated {result.truncated_tokens} of the {args.n} source tokens"
    print(json.dumps(out), flush=True)


def measure(engine, folder, n, args, verify):
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS=str(args.threads))
    paths = [args.hf_path] if engine == "hf" else [args.ordo_path]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths + [env.get("PYTHONPATH", "")] if p)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", engine, "--folder", folder, "--n", str(n),
           "--threads", str(args.threads)] + (["--weight-cache"] if args.weight_cache else []) + \
          (["--verify"] if verify else [])
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    lines = [l for l in stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"engine": engine, "n": n, "error": f"exit {proc.returncode}: {tail[:200]}"}
    out = json.loads(lines[-1])
    if not out.get("hwm_reset"):
        # The child's own figures stop before its untimed check; without a peak reset, ru_maxrss is the peak.
        out["peak_rss_mb"] = max(out["peak_rss_mb"], usage.ru_maxrss / 1024)
    return out


def table(results, args):
    rows = ["| family | tokens | engine | seconds | peak RSS MB | RSS before the pass MB "
            "| the pass's peak over it MB | runs |",
            "|---|---:|---|---:|---:|---:|---:|---:|"]
    for family in args.families:
        for n in args.sizes:
            for engine in args.engines:
                runs = [r for r in results if r["family"] == family and r["n"] == n and r["engine"] == engine]
                ok = [r for r in runs if "error" not in r]
                if not ok:
                    why = runs[0]["error"] if runs else "not run"
                    rows.append(f"| {family} | {n} | {engine} | n/a | n/a | n/a | n/a | 0 ({why}) |")
                    continue
                med = lambda k: statistics.median(r[k] for r in ok)
                extra = [r["pass_peak_mb"] - r["rss_before_mb"] for r in ok if r.get("pass_peak_mb") is not None]
                extra = f"{statistics.median(extra):.0f}" if extra else "n/a"
                rows.append(f"| {family} | {n} | {engine} | {med('seconds'):.3f} | {med('peak_rss_mb'):.0f} | "
                            f"{med('rss_before_mb'):.0f} | {extra} | {len(ok)} |")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--families", default="led,longt5,pegasus_x")
    p.add_argument("--sizes", default="1024,4096,16384")
    p.add_argument("--engines", default="ordo,hf")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cache", default="/work/peers/long-bench", help="where the random checkpoints are kept")
    p.add_argument("--tokenizers", default=os.path.join(ROOT, "tests", "data", "hf"),
                   help="folder of the led, longt5 and pegasus_x fixtures (their tokenizer files)")
    p.add_argument("--hf-path", default="/work/peers/hf-pylib", help="where transformers 4.31 imports from")
    p.add_argument("--ordo-path", default=os.path.join(ROOT, "build", "python"), help="where `import ordo` finds it")
    p.add_argument("--weight-cache", action="store_true", help="let ordo use its packed weights cache (default: off)")
    p.add_argument("--force", action="store_true", help="run even while the machine is busy")
    p.add_argument("--child", choices=["ordo", "hf"], help=argparse.SUPPRESS)
    p.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--folder", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    p.add_argument("--verify", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args)

    args.families = args.families.split(",")
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.engines = args.engines.split(",")
    for f in args.families:
        if f not in FAMILIES:
            p.error(f"unknown family {f}; known: {', '.join(FAMILIES)}")
    for e in args.engines:
        if e not in ("ordo", "hf"):
            p.error(f"unknown engine {e}; known: ordo, hf")
    load = os.getloadavg()[0]
    if load >= 1.5 and not args.force:
        raise SystemExit(f"long_inputs.py: the 1-minute load average is {load:.2f} (>= 1.5): the machine is busy; "
                         f"wait, or pass --force (the figures are then not comparable)")
    if args.prepare:
        sys.path.insert(0, args.hf_path)
        os.environ["HF_HUB_OFFLINE"] = "1"
        for f in args.families:
            folder = make_checkpoint(f, args.cache, args.tokenizers)
            for n in [WARMUP_TOKENS] + args.sizes:
                source_file(folder, n)
        return
    # The checkpoints and sources are made in a child: Linux carries a process's peak RSS over fork and
    # exec into ru_maxrss of its children, so this parent must stay small.
    subprocess.run([sys.executable, os.path.abspath(__file__), "--prepare", "--force"] + sys.argv[1:], check=True)
    folders = {f: os.path.join(args.cache, f) for f in args.families}

    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = []
    for family in args.families:
        for n in args.sizes:
            for rep in range(args.repeats):
                for engine in args.engines:
                    r = measure(engine, folders[family], n, args, verify=rep == 0)
                    r.update(family=family, repeat=rep, load=os.getloadavg()[0])
                    results.append(r)
                    print(json.dumps(r), file=sys.stderr, flush=True)

    print(f"# Long inputs: one encoder pass, {args.threads} threads, {started}, load at start {load:.2f}"
          + (" (--force: the machine was busy)" if load >= 1.5 else ""))
    print()
    print("hf: transformers eager model.get_encoder()(ids, mask[, global mask on token 0 for LED]) alone. "
          "ordo: a greedy generation of 1 new token from the same N-token source (tokenization + encoder + one "
          "decoder step; nothing subtracted). Each measurement is a fresh process: peak RSS is its ru_maxrss "
          "(model loading, the Python runtime and the pass); the last column is the pass's own peak (VmHWM reset "
          f"before it) over the RSS before it. Medians of {args.repeats} interleaved repeats. "
          "Random weights, the shapes of " + ", ".join(FAMILIES[f]["like"] for f in args.families) + ".")
    print()
    print(table(results, args))


if __name__ == "__main__":
    main()
