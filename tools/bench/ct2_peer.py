#!/usr/bin/python3
"""The CTranslate2 column of ordo-bench (never part of ordo; run only when ctranslate2 imports).

  ct2_peer.py check
  ct2_peer.py convert HF_DIR OUT_DIR QUANTIZATION       # float32 | int8 | bfloat16
  ct2_peer.py throughput CT2_DIR IDS_JSON --compute-type T --intra N --inter N --beam B --tokens L --runs R
                         [--length-penalty P]
  ct2_peer.py latency CT2_DIR IDS_JSON --compute-type T --intra N --beam B
  ct2_peer.py lines CT2_DIR IDS_JSON --compute-type T --intra N --beam B --tokens L   # start-up/memory
  ct2_peer.py golden HF_FIXTURE_DIR OUT_DIR     # convert a tests/data/hf fixture, compare with its golden.json

Conversion goes through CTranslate2's own converter code (its Marian/M2M100/Pegasus/BART/MBart/T5
loaders and Converter.convert: validate, optimize(quantization), save). Hugging Face transformers
is not installable here, so the loaders get the checkpoint's tensors through small stand-ins for
the modules they read (.weight, .bias, embed_positions computed as transformers computes them or
read from the checkpoint, T5's blocks and relative attention bias).
throughput, latency and lines take --no-repeat-ngram N (CTranslate2's no_repeat_ngram_size).
IDS_JSON is a list of source id lists (ordo's ids); ids map to tokens "t<id>" (specials by name).
Each command prints one JSON line.
"""
import json
import math
import os
import statistics
import sys
import time
import types


def load_safetensors(path):
    import numpy as np
    import torch

    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        if e["dtype"] != "F32":
            raise SystemExit("ct2_peer.py: %s: only F32 tensors are supported (%s)" % (path, name))
        a, b = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], dtype=np.float32).reshape(e["shape"]).copy())
    return out


def specials(config):
    """The special tokens by id, as the model's config.json places them."""
    model_type, vocab_size = config["model_type"], config["vocab_size"]
    if model_type == "marian":
        sp = {1: "<unk>", config["pad_token_id"]: "<pad>"}
    elif model_type == "pegasus":
        sp = {105: "<unk>", config["pad_token_id"]: "<pad>"}
    elif model_type == "t5":  # <pad> 0, </s> 1, <unk> 2; no <s>
        sp = {2: "<unk>", config["pad_token_id"]: "<pad>"}
    else:  # m2m_100 / nllb, bart, mbart (fairseq's <s> <pad> </s> <unk>)
        sp = {0: "<s>", 3: "<unk>", config["pad_token_id"]: "<pad>"}
    sp[config["eos_token_id"]] = "</s>"
    return sp


def token_names(config):
    sp = specials(config)
    return [sp.get(i, "t%d" % i) for i in range(config["vocab_size"])]


def sinusoids_marian(n, d):
    import torch

    pos = torch.arange(n, dtype=torch.float64)[:, None]
    j = torch.arange(d // 2, dtype=torch.float64)[None, :]
    angle = pos / torch.pow(10000.0, 2 * j / d)
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=1).float()


def sinusoids_fairseq(n, d, padding_idx):
    import torch

    half = d // 2
    emb = math.log(10000) / (half - 1)
    emb = torch.exp(torch.arange(half, dtype=torch.float) * -emb)
    emb = torch.arange(n, dtype=torch.float)[:, None] * emb[None, :]
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1)
    emb[padding_idx, :] = 0
    return emb


def t5_model(config, tensors):
    """T5ForConditionalGeneration as T5Loader reads it: shared, encoder/decoder.block[i].layer[j],
    final_layer_norm, lm_head (the shared table when tie_word_embeddings)."""
    ns = types.SimpleNamespace
    cfg = ns(**config)
    gated = config.get("feed_forward_proj", "relu").startswith("gated-")
    cfg.is_gated_act = config.get("is_gated_act", gated)
    # T5Config: "gated-gelu" runs gelu_new; otherwise the activation is the name itself.
    cfg.dense_act_fn = config.get("dense_act_fn", "gelu_new" if config.get("feed_forward_proj") == "gated-gelu"
                                  else config.get("feed_forward_proj", "relu").split("-")[-1])
    cfg.tie_word_embeddings = config.get("tie_word_embeddings", True)
    cfg.num_decoder_layers = config.get("num_decoder_layers", config["num_layers"])
    weight = lambda name: ns(weight=tensors[name + ".weight"])
    shared = weight("shared")

    def attention(prefix, first):
        a = ns(q=weight(prefix + ".q"), k=weight(prefix + ".k"), v=weight(prefix + ".v"), o=weight(prefix + ".o"),
               has_relative_attention_bias=first)
        if first:
            a.relative_attention_bias = weight(prefix + ".relative_attention_bias")
            a.relative_attention_max_distance = config.get("relative_attention_max_distance", 128)
        return a

    def stack(side, layers):
        blocks = []
        for i in range(layers):
            bp = "%s.block.%d.layer" % (side, i)
            parts = [ns(SelfAttention=attention(bp + ".0.SelfAttention", i == 0), layer_norm=weight(bp + ".0.layer_norm"))]
            if side == "decoder":
                parts.append(ns(EncDecAttention=attention(bp + ".1.EncDecAttention", False),
                                layer_norm=weight(bp + ".1.layer_norm")))
            fp = "%s.%d" % (bp, len(parts))
            dense = (ns(wi_0=weight(fp + ".DenseReluDense.wi_0"), wi_1=weight(fp + ".DenseReluDense.wi_1"))
                     if cfg.is_gated_act else ns(wi=weight(fp + ".DenseReluDense.wi")))
            dense.wo = weight(fp + ".DenseReluDense.wo")
            parts.append(ns(DenseReluDense=dense, layer_norm=weight(fp + ".layer_norm")))
            blocks.append(ns(layer=parts))
        return ns(block=blocks, embed_tokens=shared, final_layer_norm=weight(side + ".final_layer_norm"))

    lm_head = shared if cfg.tie_word_embeddings or "lm_head.weight" not in tensors else weight("lm_head")
    return ns(config=cfg, encoder=stack("encoder", config["num_layers"]),
              decoder=stack("decoder", cfg.num_decoder_layers), lm_head=ns(weight=lm_head.weight, bias=None))


def bart_like_model(config, tensors):
    """Marian, M2M100/NLLB, Pegasus, BART and mBART as BartLoader and its subclasses read them:
    model.shared, model.{encoder,decoder}.layers[i], embed_positions, layer norms, lm_head."""
    ns = types.SimpleNamespace
    model_type = config["model_type"]
    d = config["d_model"]
    cfg = ns(**config)
    cfg.normalize_before = config.get("normalize_before", model_type != "marian")
    cfg.normalize_embedding = config.get("normalize_embedding", False)

    def linear(prefix):
        return ns(weight=tensors[prefix + ".weight"], bias=tensors.get(prefix + ".bias"))

    def norm(prefix):
        return ns(weight=tensors[prefix + ".weight"], bias=tensors[prefix + ".bias"])

    embed = ns(weight=tensors["model.shared.weight"])

    def stack(side):
        p = "model.%s" % side
        layers = []
        for i in range(config["%s_layers" % side]):
            lp = "%s.layers.%d" % (p, i)
            attn = lambda n: ns(q_proj=linear(lp + "." + n + ".q_proj"), k_proj=linear(lp + "." + n + ".k_proj"),
                                v_proj=linear(lp + "." + n + ".v_proj"), out_proj=linear(lp + "." + n + ".out_proj"))
            layer = ns(self_attn=attn("self_attn"), self_attn_layer_norm=norm(lp + ".self_attn_layer_norm"),
                       fc1=linear(lp + ".fc1"), fc2=linear(lp + ".fc2"), final_layer_norm=norm(lp + ".final_layer_norm"))
            if side == "decoder":
                layer.encoder_attn = attn("encoder_attn")
                layer.encoder_attn_layer_norm = norm(lp + ".encoder_attn_layer_norm")
            layers.append(layer)
        n_pos = config["max_position_embeddings"]
        if model_type in ("bart", "mbart"):  # learned, BART's offset of 2
            positions = ns(weight=tensors[p + ".embed_positions.weight"], offset=2)
        elif model_type == "m2m_100":
            positions = ns(weights=sinusoids_fairseq(n_pos + 2, d, config["pad_token_id"]), offset=2)
        else:
            positions = ns(weight=sinusoids_marian(n_pos, d))
        module = ns(config=cfg, layers=layers, embed_tokens=embed, embed_positions=positions)
        if p + ".layer_norm.weight" in tensors:
            module.layer_norm = norm(p + ".layer_norm")
        if p + ".layernorm_embedding.weight" in tensors:
            module.layernorm_embedding = norm(p + ".layernorm_embedding")
        return module

    model = ns(config=cfg, model=ns(encoder=stack("encoder"), decoder=stack("decoder")),
               lm_head=ns(weight=tensors["model.shared.weight"], bias=None))
    if "final_logits_bias" in tensors:
        model.final_logits_bias = tensors["final_logits_bias"]
    return model


def convert(hf_dir, out_dir, quantization):
    from ctranslate2.converters import transformers as ct2_hf
    from ctranslate2.converters.converter import Converter

    # The loaders only ask transformers whether a module is a GPT-2 Conv1D: none here is.
    ct2_hf.transformers = types.SimpleNamespace(Conv1D=type("Conv1D", (), {}))

    config = json.load(open(os.path.join(hf_dir, "config.json")))
    tensors = load_safetensors(os.path.join(hf_dir, "model.safetensors"))
    model_type = config["model_type"]
    loaders = {"marian": ct2_hf.MarianMTLoader, "m2m_100": ct2_hf.M2M100Loader, "pegasus": ct2_hf.PegasusLoader,
               "bart": ct2_hf.BartLoader, "mbart": ct2_hf.MBartLoader, "t5": ct2_hf.T5Loader}
    if model_type not in loaders:
        raise SystemExit("ct2_peer.py: %s: model_type '%s' has no loader here" % (hf_dir, model_type))
    model = t5_model(config, tensors) if model_type == "t5" else bart_like_model(config, tensors)

    ns = types.SimpleNamespace
    names = token_names(config)
    sp = specials(config)
    by_name = {v: k for k, v in sp.items()}
    tok = ns(bos_token="<s>" if "<s>" in by_name else "</s>", eos_token="</s>", unk_token="<unk>",
             pad_token="<pad>", unk_token_id=by_name["<unk>"], special_tokens_map={},
             get_vocab=lambda: {n: i for i, n in enumerate(names)},
             convert_ids_to_tokens=lambda i: names[i])
    loader = loaders[model_type]()

    class StandIn(Converter):
        def _load(self):
            return loader(model, tok)

    StandIn().convert(out_dir, quantization=quantization, force=True)
    print(json.dumps({"converted": out_dir, "quantization": quantization}))


def golden(hf_dir, out_dir):
    """The conversion checked against transformers: a fixture of tests/data/hf converted (float32)
    and decoded greedily as its golden.json's greedy generation was (max_new_tokens, forced BOS,
    no-repeat size, min_length of the effective generation config); the tokens compared are
    those transformers chose freely (its forced last </s> at max_length excluded)."""
    import ctranslate2

    convert(hf_dir, out_dir, "float32")
    config = json.load(open(os.path.join(hf_dir, "config.json")))
    g = json.load(open(os.path.join(hf_dir, "golden.json")))
    greedy = g["generation"]["greedy"]
    eff = greedy["effective_generation_config"]
    names = token_names(config)
    eos = config["eos_token_id"]
    tr = ctranslate2.Translator(out_dir, device="cpu", compute_type="float32", intra_threads=1)
    same, compared = 0, 0
    for i, one in enumerate(greedy["per_sentence"]):
        src = [names[t] for t in g["tokenization"][i]["input_ids"]]
        hf = one["sequences"][0][1:]  # without the decoder start token
        if len(hf) == eff["max_new_tokens"] and hf[-1] == eos and eff.get("forced_eos_token_id") == eos:
            hf = hf[:-1]  # forced, not chosen
        elif hf and hf[-1] == eos:
            hf = hf[:-1]  # CTranslate2 does not return </s>
        prefix = [[names[eff["forced_bos_token_id"]]]] if eff.get("forced_bos_token_id") is not None else None
        r = tr.translate_batch([src], beam_size=1, max_decoding_length=eff["max_new_tokens"],
                               min_decoding_length=max(0, (eff.get("min_length") or 0) - 1),
                               no_repeat_ngram_size=eff.get("no_repeat_ngram_size") or 0, target_prefix=prefix)
        ct2 = [names.index(t) if not t.startswith("t") else int(t[1:]) for t in r[0].hypotheses[0]]
        compared += 1
        if ct2[:len(hf)] == hf:
            same += 1
        else:
            print(json.dumps({"sentence": i, "transformers": hf, "ctranslate2": ct2}))
    print(json.dumps({"fixture": hf_dir, "greedy_sentences": compared, "identical": same}))


def translator(args):
    import ctranslate2

    return ctranslate2.Translator(args["dir"], device="cpu", compute_type=args["compute_type"],
                                  intra_threads=args["intra"], inter_threads=args.get("inter", 1))


def read_batch(args):
    cfg = json.load(open(os.path.join(args["dir"], "config.json")))
    vocab_file = os.path.join(args["dir"], "shared_vocabulary.json")
    names = json.load(open(vocab_file)) if os.path.exists(vocab_file) else None
    ids = json.load(open(args["ids"]))
    return [[names[i] if i < len(names) else "<unk>" for i in s] for s in ids], cfg


def parse(argv):
    args = {"dir": argv[0], "ids": argv[1], "compute_type": "float32", "intra": 1, "inter": 1, "beam": 1,
            "tokens": 32, "runs": 3}
    i = 2
    while i < len(argv):
        key = argv[i].lstrip("-").replace("-", "_")
        args[key] = (argv[i + 1] if key == "compute_type" else float(argv[i + 1]) if key == "length_penalty"
                     else int(argv[i + 1]))
        i += 2
    return args


def main():
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "check":
        import ctranslate2

        print(json.dumps({"version": ctranslate2.__version__,
                          "compute_types": sorted(ctranslate2.get_supported_compute_types("cpu"))}))
        return
    if cmd == "convert":
        convert(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    if cmd == "golden":
        golden(sys.argv[2], sys.argv[3])
        return
    t_start = time.perf_counter()
    args = parse(sys.argv[2:])
    batch, _ = read_batch(args)
    tr = translator(args)
    if cmd == "lines":  # start-up (first line) and memory: one sentence at a time, printed as it comes
        for src in batch:
            r = tr.translate_batch([src], beam_size=args["beam"], min_decoding_length=args["tokens"],
                                   max_decoding_length=args["tokens"],
                                   no_repeat_ngram_size=args.get("no_repeat_ngram", 0))
            print(" ".join(r[0].hypotheses[0]), flush=True)
        return
    kw = dict(beam_size=args["beam"], return_scores=False, length_penalty=args.get("length_penalty", 1.0),
              no_repeat_ngram_size=args.get("no_repeat_ngram", 0))
    if cmd == "throughput":
        kw.update(min_decoding_length=args["tokens"], max_decoding_length=args["tokens"])
        tr.translate_batch(batch, **kw)
        times = []
        for _ in range(args["runs"]):
            t0 = time.perf_counter()
            tr.translate_batch(batch, max_batch_size=(len(batch) + args["inter"] - 1) // args["inter"], **kw)
            times.append(time.perf_counter() - t0)
        print(json.dumps({"tokens_per_s": len(batch) * args["tokens"] / statistics.median(times), "times": times}))
    elif cmd == "latency":  # batch 1, target length = source length
        lat = []
        tr.translate_batch([batch[0]], **kw)
        for src in batch:
            t0 = time.perf_counter()
            tr.translate_batch([src], min_decoding_length=len(src), max_decoding_length=len(src), **kw)
            lat.append(time.perf_counter() - t0)
        lat.sort()
        print(json.dumps({"p50": lat[len(lat) // 2], "p95": lat[min(len(lat) - 1, int(0.95 * len(lat)))],
                          "n": len(lat), "total_s": time.perf_counter() - t_start}))
    else:
        raise SystemExit("ct2_peer.py: unknown command '%s'" % cmd)


if __name__ == "__main__":
    main()
