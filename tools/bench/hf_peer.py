#!/usr/bin/python3
"""The Hugging Face transformers column of ordo-bench (eager PyTorch; never part of ordo).

  hf_peer.py check
  hf_peer.py throughput HF_DIR IDS_JSON --intra N --beam B --tokens L --runs R
                        [--length-penalty P] [--no-repeat-ngram N]

Loads the folder with AutoModelForSeq2SeqLM (float32, eval, torch.inference_mode), runs
generate() on the whole batch of IDS_JSON (ordo's source ids, all of one length: no padding)
with exactly L new tokens per sentence (min_new_tokens = max_new_tokens), one warm-up call
first, and prints one JSON line {"tokens_per_s": median over R runs, "times": [...]}.
transformers must be importable (PYTHONPATH: e.g. a pure-Python transformers 4.31 folder).
"""
import json
import statistics
import sys
import time


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    import torch
    import transformers

    if cmd == "check":
        print(json.dumps({"version": transformers.__version__, "torch": torch.__version__}))
        return
    if cmd != "throughput":
        raise SystemExit("hf_peer.py: unknown command '%s'" % cmd)
    args = {"dir": sys.argv[2], "ids": sys.argv[3], "intra": 1, "beam": 1, "tokens": 32, "runs": 3,
            "length_penalty": 1.0, "no_repeat_ngram": 0}
    rest = sys.argv[4:]
    for key, value in zip(rest[0::2], rest[1::2]):
        key = key.lstrip("-").replace("-", "_")
        args[key] = float(value) if key == "length_penalty" else int(value)
    torch.set_num_threads(args["intra"])
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(args["dir"], torch_dtype=torch.float32).eval()
    ids = json.load(open(args["ids"]))
    if len(set(len(s) for s in ids)) != 1:
        raise SystemExit("hf_peer.py: %s: the sentences must all have one length" % args["ids"])
    batch = torch.tensor(ids, dtype=torch.long)
    kw = dict(num_beams=args["beam"], max_new_tokens=args["tokens"], min_new_tokens=args["tokens"],
              length_penalty=args["length_penalty"], no_repeat_ngram_size=args["no_repeat_ngram"],
              early_stopping=False, do_sample=False)
    with torch.inference_mode():
        model.generate(batch, attention_mask=torch.ones_like(batch), **kw)
        times = []
        for _ in range(args["runs"]):
            t0 = time.perf_counter()
            model.generate(batch, attention_mask=torch.ones_like(batch), **kw)
            times.append(time.perf_counter() - t0)
    print(json.dumps({"tokens_per_s": len(ids) * args["tokens"] / statistics.median(times), "times": times}))


if __name__ == "__main__":
    main()
