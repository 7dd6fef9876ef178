#!/usr/bin/python3
"""Random-weight Whisper checkpoints of the real shapes of openai/whisper-tiny, -base and -small,
for the speed comparison of tools/bench/whisper/bench.py (never part of ordo; a measuring tool).

  PYTHONPATH=/work/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 tools/bench/whisper/make_models.py \
      --out /work/peers/whisper-bench [--shapes tiny,base,small] [--seed 1234] [--force]

Each folder --out/<shape>/ is what transformers 4.31 saves for WhisperForConditionalGeneration(config)
after torch.manual_seed(seed) (save_pretrained(safe_serialization=True): config.json,
generation_config.json, model.safetensors), with the tokenizer, preprocessor and generation files of
the test fixture tests/data/hf/whisper/ (the real multilingual tokenizer and whisper-base's
generation_config), whose alignment_heads are replaced by the real model's own for that shape.

Random weights say random words and never learned when to stop. So that every engine generates the
same number of tokens per 30 s window, the <|endoftext|> row of the (tied) token embedding is scaled
by EOS_SCALE: its logit stays near 0 while the best of the other 51,864 is well above it, so no
engine ever picks it, and each window runs to the engines' common cap on new tokens (bench.py sets
it in all three). The row is scaled, not zeroed, so that int8 quantization of it stays well defined.
"""
import argparse
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "data", "hf", "whisper")
EOS_ID = 50257
EOS_SCALE = 0.01

# d_model, encoder/decoder layers, attention heads, ffn: the published checkpoints' config.json.
# alignment_heads: openai-whisper's _ALIGNMENT_HEADS for the model (decoder layer, head).
SHAPES = {
    "tiny": dict(d_model=384, layers=4, heads=6, ffn=1536,
                 alignment_heads=[[2, 2], [3, 0], [3, 2], [3, 3], [3, 4], [3, 5]]),
    "base": dict(d_model=512, layers=6, heads=8, ffn=2048,
                 alignment_heads=[[3, 1], [4, 2], [4, 3], [4, 7], [5, 1], [5, 2], [5, 4], [5, 6]]),
    "small": dict(d_model=768, layers=12, heads=12, ffn=3072,
                  alignment_heads=[[5, 3], [5, 9], [8, 0], [8, 4], [8, 7], [8, 8], [9, 0], [9, 7], [9, 9],
                                   [10, 5]]),
}
# The fixture's files that are not weights or the model's shape.
COPIED = ["added_tokens.json", "merges.txt", "normalizer.json", "preprocessor_config.json",
          "special_tokens_map.json", "tokenizer_config.json", "vocab.json"]


def make(shape, out_dir, seed):
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    s = SHAPES[shape]
    with open(os.path.join(FIXTURE, "config.json")) as f:
        config = json.load(f)
    for k in ("architectures", "transformers_version", "torch_dtype"):
        config.pop(k, None)
    config.update(d_model=s["d_model"], encoder_layers=s["layers"], decoder_layers=s["layers"],
                  num_hidden_layers=s["layers"], encoder_attention_heads=s["heads"],
                  decoder_attention_heads=s["heads"], encoder_ffn_dim=s["ffn"], decoder_ffn_dim=s["ffn"],
                  num_mel_bins=80, vocab_size=51865, max_source_positions=1500, max_target_positions=448)
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(WhisperConfig(**config)).eval()
    with torch.no_grad():
        model.model.decoder.embed_tokens.weight[EOS_ID] *= EOS_SCALE
    assert model.proj_out.weight.data_ptr() == model.model.decoder.embed_tokens.weight.data_ptr(), "untied proj_out"
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    for name in COPIED:
        shutil.copyfile(os.path.join(FIXTURE, name), os.path.join(out_dir, name))
    with open(os.path.join(FIXTURE, "generation_config.json")) as f:
        gen = json.load(f)
    gen["alignment_heads"] = s["alignment_heads"]
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2, sort_keys=True)
        f.write("\n")
    params = sum(p.numel() for p in model.parameters())
    print(f"{shape}: {out_dir} ({params / 1e6:.1f} M parameters, seed {seed})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="folder that receives <shape>/ for each shape")
    ap.add_argument("--shapes", default="tiny,base,small")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--force", action="store_true", help="write again a folder that exists")
    args = ap.parse_args()
    for shape in args.shapes.split(","):
        if shape not in SHAPES:
            sys.exit(f"make_models: unknown shape {shape!r} (known: {', '.join(SHAPES)})")
        out_dir = os.path.join(args.out, shape)
        if os.path.exists(os.path.join(out_dir, "model.safetensors")) and not args.force:
            print(f"{shape}: {out_dir} exists (--force writes it again)")
            continue
        make(shape, out_dir, args.seed)


if __name__ == "__main__":
    main()
