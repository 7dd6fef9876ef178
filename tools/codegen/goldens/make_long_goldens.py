#!/usr/bin/env python3
"""Held-out-like goldens for the long-input families, made by Hugging Face transformers 4.31.

The shared led / longt5 / pegasus_x fixtures fix one setting each (window, radius, block size...).
The acceptance runs fixtures of these families with settings the engine has not seen, so this makes
three more tiny random checkpoints whose settings differ on purpose, and what transformers computes
for them, into tests/data/hf/<name>/:

- led_alt: `attention_window` a single int (6, not a per-layer list), 3 encoder layers, d_model 24,
  2 encoder / 4 decoder heads, 2048 encoder and 512 decoder positions; generation_config with
  no_repeat_ngram_size 3 and length_penalty 2.0 (so they apply to every case, greedy included).
- longt5_alt: transient-global, local_radius 2, global_block_size 3, d_kv 4 × 2 heads != d_model 16,
  3 encoder / 2 decoder layers, relu feed-forward, tied embeddings (decoder output × d_model^-0.5),
  16 relative-position buckets with max distance 64.
- pegasus_x_alt: block_size 4, 2 global tokens, stagger_local_blocks false, 3 encoder layers,
  d_model 16, 2 encoder / 4 decoder heads, 8192 positions.

Each folder is save_pretrained(safe_serialization=True) plus the tokenizer files of the matching
shared fixture (`--shared`, default tests/data/hf), and a golden.json laid out like the shared
fixtures' (see tests/data/hf/README.md) with only: meta, special_ids, sentences (the shared
fixture's 9), tokenization, encoder (last_hidden_state of sentence 0, long_last_hidden_state of
sentence 7), generation.greedy / beam4 / batched_greedy (the shared fixture's generate() kwargs).
LED runs with global attention on the first token, as the shared led fixture does. Every value is
computed from the checkpoint as reloaded from its folder. The EOS logit is raised until a few
greedy outputs end early; a seed whose minimum greedy margin is not above 1e-3 is replaced by the
next one. CPU, float32, one thread. transformers 4.31 assembled as pure Python on Debian's torch
(../shared/peers/README.md section 3):

  PYTHONPATH=/work/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 \
      tools/codegen/goldens/make_long_goldens.py [--shared DIR] [name ...]
"""
import argparse
import copy
import json
import math
import os
import shutil
import time

import torch
import transformers
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
from transformers import tokenization_utils_base

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "hf")
MARGIN_THRESHOLD = 1e-3
EOS_DELTAS = [0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32, 36, 40, 48, 56]
CHECKPOINT_FILES = {"config.json", "generation_config.json", "model.safetensors", "golden.json", "attention.json"}


def led_alt():
    config = transformers.LEDConfig(
        vocab_size=50265, d_model=24, encoder_layers=3, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=4, encoder_ffn_dim=40, decoder_ffn_dim=48, attention_window=6,
        max_encoder_position_embeddings=2048, max_decoder_position_embeddings=512, activation_function="gelu",
        pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2)
    generation = dict(bos_token_id=0, decoder_start_token_id=2, eos_token_id=2, pad_token_id=1, early_stopping=True,
                      num_beams=4, length_penalty=2.0, no_repeat_ngram_size=3, max_length=512)
    notes = ("weights: all parameters random (layer-norm weights ~1+0.25N incl. layernorm_embedding, biases and "
             "final_logits_bias nonzero; query/key/value AND query_global/key_global/value_global random); learned "
             "position tables random with NO offset (encoder 2048 rows, decoder 512 rows). config.json has "
             "attention_window as the single int 6 (transformers expands it to [6, 6, 6], one per encoder layer: "
             "each token sees 3 positions on each side) plus global attention on the first token; transformers pads "
             "the input to a multiple of 6 inside the encoder and strips it again. generation_config has "
             "no_repeat_ngram_size 3 and length_penalty 2.0, in force for every case (greedy included). The EOS "
             "raise is in final_logits_bias.")
    return dict(base="led", model_class=transformers.LEDForConditionalGeneration, config=config,
                generation=generation, seed=2011000, int_attention_window=6, notes=notes)


def longt5_alt():
    config = transformers.LongT5Config(
        vocab_size=32128, d_model=16, d_kv=4, d_ff=24, num_layers=3, num_decoder_layers=2, num_heads=2,
        encoder_attention_type="transient-global", local_radius=2, global_block_size=3,
        relative_attention_num_buckets=16, relative_attention_max_distance=64, feed_forward_proj="relu",
        tie_word_embeddings=True, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    generation = dict(decoder_start_token_id=0, eos_token_id=1, pad_token_id=0)
    notes = ("weights: all parameters random (RMS layer-norm weights ~1+0.25N incl. global_input_layer_norm, the "
             "decoder's final layer norm ~3+0.7N; no biases exist; relative_attention_bias and "
             "global_relative_attention_bias [16 buckets][2 heads] ~N(0,1), only in block 0 of each stack). "
             "num_heads*d_kv = 8 != d_model 16. feed_forward_proj relu (not gated). tie_word_embeddings true: "
             "lm_head is shared.weight and the decoder output is multiplied by d_model^-0.5 before it; the EOS raise "
             "is in that shared row, so it also changes the encoder's input embedding of </s>. Encoder "
             "self-attention: transient-global, local_radius 2 (block_len 3), global_block_size 3; relative "
             "buckets 16, max distance 64. The float64 rerun (meta.float64_same_sequences) differs on the long "
             "inputs for a reason of transformers' own: _make_global_fixed_block_ids takes the block of position i "
             "as floor(cumsum of 1/global_block_size), which in float64 rounds 3 * (1/3) down to 0.999... and puts "
             "every third position in the previous block; in float32 (the goldens) it is floor(i / 3) exactly, with "
             "the orphan tail merged into the last full block.")
    return dict(base="longt5", model_class=transformers.LongT5ForConditionalGeneration, config=config,
                generation=generation, seed=2012000, notes=notes)


def pegasus_x_alt():
    config = transformers.PegasusXConfig(
        vocab_size=96103, d_model=16, encoder_layers=3, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=4, encoder_ffn_dim=24, decoder_ffn_dim=32, max_position_embeddings=8192,
        block_size=4, num_global_tokens=2, stagger_local_blocks=False, activation_function="gelu",
        scale_embedding=True, pad_token_id=0, eos_token_id=1, forced_eos_token_id=1, decoder_start_token_id=0)
    generation = dict(decoder_start_token_id=0, eos_token_id=1, forced_eos_token_id=1, pad_token_id=0, num_beams=4,
                      length_penalty=1.0, max_length=128)
    notes = ("weights: all parameters random (layer-norm weights ~1+0.25N incl. global_self_attn_layer_norm, the "
             "decoder's final layer norm ~3+0.7N; biases nonzero; embed_global [2][16] random; lm_head tied to "
             "shared, the EOS raise is in that shared row so it also changes the encoder's input embedding of </s>); "
             "sinusoidal positions computed on the fly. Encoder self-attention: block-local, block_size 4, 2 global "
             "tokens, stagger_local_blocks false (no layer is shifted); the input is padded to a multiple of 4 "
             "(masked) and last_hidden_state holds the real positions only.")
    return dict(base="pegasus_x", model_class=transformers.PegasusXForConditionalGeneration, config=config,
                generation=generation, seed=2013000, notes=notes)


PLANS = {"led_alt": led_alt, "longt5_alt": longt5_alt, "pegasus_x_alt": pegasus_x_alt}


def give_added_token_its_str():
    """Without the `tokenizers` package transformers 4.31 uses a stand-in AddedToken without __str__,
    __eq__ or __hash__ on the content; BartTokenizer/LEDTokenizer then map their special tokens to None.
    Give it the real class's behaviour (../shared/peers/README.md, quirks)."""
    if tokenization_utils_base.is_tokenizers_available():
        return
    added = tokenization_utils_base.AddedToken
    added.__str__ = lambda self: self.content
    added.__eq__ = lambda self, other: str(self) == str(other)
    added.__hash__ = lambda self: hash(self.content)


def randomize(model, seed, decoder_final_norm):
    """Random weights of the shared fixtures' kind: every tensor nonzero, norms near 1, attention peaky
    enough that the window/global structure matters."""
    gen = torch.Generator().manual_seed(seed)
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name in sorted(params):
            p = params[name]
            leaf = name.split(".")[-2] if "." in name else name
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            lname = name.lower()
            if "norm" in lname:
                if name.endswith("bias"):
                    value = 0.15 * noise
                elif name in decoder_final_norm:
                    value = 3.0 + 0.7 * noise
                else:
                    value = 1.0 + 0.25 * noise
            elif "relative_attention_bias" in name:
                value = noise
            elif name == "final_logits_bias":
                value = 0.5 * noise
            elif "embed" in lname or name.endswith("shared.weight") or name == "shared.weight":
                value = (2.0 / math.sqrt(p.shape[-1])) * noise
            elif name.endswith("bias"):
                value = 0.2 * noise
            elif p.dim() == 2:
                gain = 1.0
                if leaf in ("q", "k", "q_proj", "k_proj", "query", "key", "query_global", "key_global"):
                    gain = 2.5
                elif leaf in ("o", "out_proj", "output", "fc2", "wo"):
                    gain = 2.0
                value = (gain / math.sqrt(p.shape[1])) * noise
            else:
                raise ValueError(f"no rule for parameter {name} {tuple(p.shape)}")
            p.copy_(value)


def f32(x):
    return float(torch.tensor(float(x), dtype=torch.float32).item())


def floats(t):
    return [[f32(v) for v in row] for row in t.float().tolist()]


class Runner:
    """One checkpoint's generate()/encoder calls, with LED's first-token global attention."""

    def __init__(self, model, tok):
        self.model, self.tok = model, tok
        self.led = model.config.model_type == "led"

    def extra(self, input_ids):
        if not self.led:
            return {}
        gam = torch.zeros_like(input_ids)
        gam[:, 0] = 1
        return {"global_attention_mask": gam}

    def encode(self, sentences, padding=False):
        return self.tok(sentences, return_tensors="pt", padding=padding)

    def encoder_states(self, sentence):
        enc = self.encode([sentence])
        with torch.inference_mode():
            out = self.model.get_encoder()(**enc, **self.extra(enc.input_ids))
        return out.last_hidden_state[0]

    def generate(self, sentences, kwargs, padding=False):
        enc = self.encode(sentences, padding)
        with torch.inference_mode():
            out = self.model.generate(**enc, **self.extra(enc.input_ids), **kwargs)
        return enc, out


def margins(scores, row):
    result = []
    for step in scores:
        top = torch.topk(step[row].float(), 2).values
        result.append(None if not torch.isfinite(top[1]) else float(top[0] - top[1]))
    return result


def lengths(sequences, eos):
    out = []
    for seq in sequences:
        n = len(seq)
        for i, t in enumerate(seq[1:], start=1):
            if t == eos:
                n = i + 1
                break
        out.append(n)
    return out


def effective(model, kwargs):
    config = copy.deepcopy(model.generation_config)
    config.update(**kwargs)
    d = config.to_dict()
    d.pop("transformers_version", None)
    return d


def greedy_lengths(runner, sentences, kwargs):
    eos = runner.model.generation_config.eos_token_id
    result = []
    for s in sentences:
        _, out = runner.generate([s], kwargs)
        result.append(lengths(out.sequences.tolist(), eos)[0])
    return result


def lm_head_input_mean(runner, sentences, kwargs):
    seen = []
    def keep(module, args, out):
        seen.append(args[0].reshape(-1, args[0].shape[-1]))

    hook = runner.model.lm_head.register_forward_hook(keep)
    try:
        for s in sentences:
            runner.generate([s], kwargs)
    finally:
        hook.remove()
    return torch.cat(seen).mean(0)


def raise_eos(model, eos, delta, mean_h):
    with torch.no_grad():
        if hasattr(model, "final_logits_bias"):
            model.final_logits_bias[0, eos] += delta
            return "final_logits_bias[eos] += delta"
        model.lm_head.weight[eos] += delta * mean_h / mean_h.dot(mean_h)
        return "output_embedding[eos] += delta * mean_h/|mean_h|^2"


def calibrate_eos(plan, model, tok, sentences, greedy_kwargs, max_new):
    """The smallest raise of the EOS logit that makes at least two greedy outputs end early."""
    runner = Runner(model, tok)
    eos = model.generation_config.eos_token_id
    mean_h = lm_head_input_mean(runner, sentences, greedy_kwargs)
    chosen = None
    for delta in EOS_DELTAS:
        trial = copy.deepcopy(model)
        method = raise_eos(trial, eos, delta, mean_h)
        lens = greedy_lengths(Runner(trial, tok), sentences, greedy_kwargs)
        early = sum(n < max_new + 1 for n in lens)
        chosen = (delta, method, lens)
        if early >= 2:
            break
    delta, method, lens = chosen
    raise_eos(model, eos, delta, mean_h)
    return {"method": method, "delta": delta, "greedy_lengths": lens}


def dims(config):
    keys = ["d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", "decoder_attention_heads",
            "encoder_ffn_dim", "decoder_ffn_dim", "vocab_size", "activation_function", "scale_embedding",
            "attention_window", "max_encoder_position_embeddings", "max_decoder_position_embeddings",
            "max_position_embeddings", "d_kv", "d_ff", "num_layers", "num_decoder_layers", "num_heads",
            "feed_forward_proj", "dense_act_fn", "is_gated_act", "relative_attention_num_buckets",
            "relative_attention_max_distance", "layer_norm_epsilon", "encoder_attention_type", "local_radius",
            "global_block_size", "block_size", "num_global_tokens", "stagger_local_blocks", "tie_word_embeddings"]
    d = config.to_dict()
    return {k: d[k] for k in keys if k in d}


def build(name, plan, shared, out_dir, attempt):
    base_dir = os.path.join(shared, plan["base"])
    base = json.load(open(os.path.join(base_dir, "golden.json"), encoding="utf-8"))
    sentences = base["sentences"]
    cases = {c: base["generation"][c]["kwargs"] for c in ("greedy", "beam4", "batched_greedy")}
    max_new = cases["greedy"]["max_new_tokens"]
    seed = plan["seed"] + attempt

    torch.manual_seed(seed)
    model = plan["model_class"](copy.deepcopy(plan["config"])).eval()
    finals = {n for n, _ in model.named_parameters()
              if n.endswith(("decoder.final_layer_norm.weight", "decoder.layer_norm.weight"))}
    randomize(model, seed, finals)
    model.generation_config = transformers.GenerationConfig(**plan["generation"])
    tok = AutoTokenizer.from_pretrained(base_dir, use_fast=False)
    calibration = calibrate_eos(plan, model, tok, sentences, dict(cases["greedy"], output_scores=False,
                                                                   return_dict_in_generate=True), max_new)

    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    model.save_pretrained(out_dir, safe_serialization=True)
    for f in sorted(os.listdir(base_dir)):
        if f not in CHECKPOINT_FILES:
            shutil.copyfile(os.path.join(base_dir, f), os.path.join(out_dir, f))
    if plan.get("int_attention_window"):
        # transformers rewrites an int attention_window into a per-layer list on the config it was given;
        # the checkpoint keeps the int form, the one under test.
        path = os.path.join(out_dir, "config.json")
        config = json.load(open(path))
        config["attention_window"] = plan["int_attention_window"]
        with open(path, "w") as f:
            json.dump(config, f, indent=2, sort_keys=True)
            f.write("\n")

    # Everything below comes from the folder as saved.
    model = AutoModelForSeq2SeqLM.from_pretrained(out_dir).eval()
    tok = AutoTokenizer.from_pretrained(out_dir, use_fast=False)
    runner = Runner(model, tok)
    gc = model.generation_config
    golden = {
        "meta": {},
        "special_ids": {
            "pad_token_id": gc.pad_token_id, "eos_token_id": gc.eos_token_id, "bos_token_id": gc.bos_token_id,
            "decoder_start_token_id": gc.decoder_start_token_id, "forced_bos_token_id": gc.forced_bos_token_id,
            "forced_eos_token_id": gc.forced_eos_token_id, "tokenizer_unk_token_id": tok.unk_token_id,
            "tokenizer_pad_token_id": tok.pad_token_id, "tokenizer_eos_token_id": tok.eos_token_id,
        },
        "sentences": sentences,
        "tokenization": [],
        "encoder": {},
        "generation": {},
    }
    for i, s in enumerate(sentences):
        ids = tok(s).input_ids
        assert ids == base["tokenization"][i]["input_ids"], (name, i)
        golden["tokenization"].append({"input_ids": ids, "pieces": tok.tokenize(s)})

    h0, h7 = runner.encoder_states(sentences[0]), runner.encoder_states(sentences[7])
    golden["encoder"] = {"sentence_index": 0, "last_hidden_state": floats(h0), "long_sentence_index": 7,
                         "long_last_hidden_state": floats(h7)}
    if runner.led:
        golden["encoder"]["global_attention_mask"] = "meta.global_attention_mask (rule 'first_token')"
    golden["encoder"]["note"] = "[seq][d_model] for the real input positions (the encoder's internal padding, " \
                                "side/global tokens are not part of last_hidden_state)"

    min_margin = math.inf
    for case in ("greedy", "beam4"):
        kwargs = cases[case]
        per = []
        for s in sentences:
            _, out = runner.generate([s], kwargs)
            seqs = out.sequences.tolist()
            entry = {"sequences": seqs}
            if case == "greedy":
                entry["step_margins"] = margins(out.scores, 0)
                finite = [m for m in entry["step_margins"] if m is not None]
                min_margin = min([min_margin] + finite)
            if getattr(out, "sequences_scores", None) is not None:
                entry["sequences_scores"] = [f32(v) for v in out.sequences_scores.tolist()]
            entry["texts"] = tok.batch_decode(out.sequences, skip_special_tokens=True)
            entry["lengths"] = lengths(seqs, gc.eos_token_id)
            entry["tokens"] = [tok.convert_ids_to_tokens(q) for q in seqs]
            per.append(entry)
        golden["generation"][case] = {"kwargs": kwargs, "per_sentence": per,
                                      "effective_generation_config": effective(model, kwargs)}

    kwargs = cases["batched_greedy"]
    enc, out = runner.generate(sentences, kwargs, padding=True)
    seqs = out.sequences.tolist()
    lens = lengths(seqs, gc.eos_token_id)
    batched = {"kwargs": kwargs, "input_ids": enc.input_ids.tolist(), "attention_mask": enc.attention_mask.tolist()}
    if runner.led:
        batched["global_attention_mask"] = runner.extra(enc.input_ids)["global_attention_mask"].tolist()
    batched.update({"sequences": seqs, "step_margins": [margins(out.scores, r) for r in range(len(seqs))],
                    "effective_generation_config": effective(model, kwargs),
                    "texts": tok.batch_decode(out.sequences, skip_special_tokens=True), "lengths": lens,
                    "decode_kwargs": {"skip_special_tokens": True}})
    for r, row in enumerate(batched["step_margins"]):
        # Steps up to the row's EOS; after it the row only receives padding.
        finite = [m for m in row[: lens[r] - 1] if m is not None]
        min_margin = min([min_margin] + finite)
    golden["generation"]["batched_greedy"] = batched

    # float64 rerun: same tokens, and how far float32 is from it (a guide for tolerances).
    torch.set_default_dtype(torch.float64)
    try:
        model64 = AutoModelForSeq2SeqLM.from_pretrained(out_dir, torch_dtype=torch.float64).eval()
        r64 = Runner(model64, tok)
        per = golden["generation"]
        same = all(r64.generate([s], cases[c])[1].sequences.tolist() == per[c]["per_sentence"][i]["sequences"]
                   for c in ("greedy", "beam4") for i, s in enumerate(sentences))
        same = same and r64.generate(sentences, kwargs, padding=True)[1].sequences.tolist() == seqs
        diff = {"encoder_last_hidden_state": float((r64.encoder_states(sentences[0]) - h0.double()).abs().max()),
                "encoder_long_last_hidden_state": float((r64.encoder_states(sentences[7]) - h7.double()).abs().max())}
    finally:
        torch.set_default_dtype(torch.float32)

    config = model.config
    golden["meta"] = {
        "fixture": name,
        "base_fixture": plan["base"],
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": type(model).__name__,
        "tokenizer_class": type(tok).__name__,
        "made_by": "tools/codegen/goldens/make_long_goldens.py",
        "attempt": attempt,
        "torch_seed": seed,
        "eos_calibration": calibration,
        "created_unix": int(time.time()),
        "tokenizer_provenance": f"the tokenizer files of the shared `{plan['base']}` fixture, copied unchanged "
                                f"(its golden.json meta.tokenizer_provenance says where they come from)",
        "dims": dims(config),
        "config_json_attention_window": plan.get("int_attention_window"),
        "notes": plan["notes"] + " Computed on CPU, float32, torch.set_num_threads(1), from the folder as saved.",
        "long_sentence_indices": [7, 8],
        "min_greedy_margin": min_margin,
        "margin_threshold": MARGIN_THRESHOLD,
        "margin_ok": min_margin > MARGIN_THRESHOLD,
        "min_greedy_margin_covers": "greedy step_margins of every sentence and batched_greedy up to each row's EOS",
        "float64_same_sequences": same,
        "max_abs_diff_f32_vs_f64": diff,
        "cases": {c: "the shared fixture's golden.json generation." + c + ".kwargs" for c in cases},
    }
    if not plan.get("int_attention_window"):
        del golden["meta"]["config_json_attention_window"]
    if runner.led:
        golden["meta"]["global_attention_mask"] = {
            "rule": "first_token", "positions": [0],
            "code": "global_attention_mask = torch.zeros_like(input_ids); global_attention_mask[:, 0] = 1",
            "applies_to": "every encoder run: encoder goldens and every generate() call (single-sentence and "
                          "batched; with right padding position 0 is always the first real token <s>); the "
                          "decoder's cross-attention mask is the plain attention_mask"}
    return golden


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"fixtures to make (default: all of {', '.join(PLANS)})")
    parser.add_argument("--shared", default=DATA, help="folder holding the led, longt5 and pegasus_x fixtures")
    parser.add_argument("--out", default=DATA, help="where to write <name>/")
    parser.add_argument("--attempts", type=int, default=5)
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in PLANS]
    if unknown:
        parser.error(f"unknown fixture {unknown[0]}; known: {', '.join(PLANS)}")
    give_added_token_its_str()
    torch.set_num_threads(1)
    for name in args.names or list(PLANS):
        plan = PLANS[name]()
        out_dir = os.path.join(args.out, name)
        tries = []
        for attempt in range(args.attempts):
            golden = build(name, plan, args.shared, out_dir, attempt)
            meta = golden["meta"]
            tries.append({k: meta[k] for k in ("attempt", "torch_seed", "min_greedy_margin", "float64_same_sequences",
                                               "eos_calibration")})
            if meta["margin_ok"]:
                break
        else:
            raise SystemExit(f"{name}: no seed of {args.attempts} gave a greedy margin above {MARGIN_THRESHOLD}")
        meta["attempts"] = tries
        with open(os.path.join(out_dir, "golden.json"), "w", encoding="utf-8") as f:
            json.dump(golden, f, ensure_ascii=False, allow_nan=False)
            f.write("\n")
        size = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))
        print(f"{out_dir}: seed {meta['torch_seed']}, min greedy margin {meta['min_greedy_margin']:.4g}, "
              f"greedy lengths {meta['eos_calibration']['greedy_lengths']}, "
              f"model.safetensors {os.path.getsize(os.path.join(out_dir, 'model.safetensors'))} bytes, folder {size}")


if __name__ == "__main__":
    main()
