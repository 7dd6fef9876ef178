#!/usr/bin/env python3
"""Model-level goldens for Whisper (WhisperForConditionalGeneration), made by transformers 4.31.

The shared `whisper` fixture's speech.json checks whole generations; these check the model itself,
so that a wrong layer shows as a wrong number rather than as a different token 20 steps later:

- the encoder's last_hidden_state (some whole rows, and mean/std over everything) for given
  log-mel features;
- the decoder's logits, teacher-forced on a given id sequence: the top 5 ids and logits of every
  position, the gaps between ranks 1..6 (a test may only demand identical ids where they are not
  ties), and the logits of a few fixed ids;
- float32_error: how far transformers' own float32 results are from the same model run in float64
  (max abs over the encoder output and over all logits). The shared fixture's decoder is scaled
  to make its output depend on the audio (logits around 50), and its float32 logits carry about
  1e-3 of rounding: a test cannot ask another float32 implementation for less.

Two fixtures:

- whisper: tests/data/hf/whisper as it is (80 mel bins, d_model 64, 2+2 layers, 51865 ids), on
  features/en_16k.npy, teacher-forced on speech.json's first greedy sequence.
- whisper_alt: made here, a checkpoint whose settings differ on purpose: 128 mel bins (as
  large-v3), d_model 48, 3 encoder / 1 decoder layers, 6 encoder / 4 decoder heads, different
  encoder and decoder ffn sizes, max_source_positions 200 (features of 400 frames = 4 s),
  max_target_positions 64, vocab_size 512 (no tokenizer). Random init (torch.manual_seed), the
  encoder's position table set to Whisper's sinusoids (as converted checkpoints hold them), then
  scaled so that the output depends on the audio (conv1 x10, conv2 x4, decoder cross-attention
  q/k x18 and v/out x8, decoder final layer_norm weight x20). Written with
  save_pretrained(safe_serialization=True), with its features (WhisperFeatureExtractor, 128 mel
  bins, chunk_length 4, on audio/en_16k.wav) as features.npy and its preprocessor_config.json.
  A seed whose top-6 logits come closer than 1e-3 anywhere is replaced by the next one.

Output: tests/data/hf/whisper/model_golden.json (both fixtures). CPU, float32, one thread:

  PYTHONPATH=/work/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 tools/codegen/whisper/make_model_goldens.py
"""
import copy
import json
import math
import os
import wave

import numpy as np
import torch
import transformers
from transformers import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "hf")
MAIN = os.path.join(DATA, "whisper")
ALT = os.path.join(DATA, "whisper_alt")
FIXED_IDS = [0, 1, 2, 3]  # plus each fixture's eos
GAP_THRESHOLD = 1e-3


def read_wav(path):
    with wave.open(path, "rb") as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2 and w.getframerate() == 16000, path
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return data.astype(np.float32) / 32768.0


def encoder_rows(length):
    rows = sorted({0, 1, 2, 3, length // 3, length // 2 - 1, length // 2, length - 2, length - 1})
    return [r for r in rows if 0 <= r < length]


def goldens(model, features, ids, eos):
    with torch.inference_mode():
        encoder = model.model.encoder(torch.from_numpy(features)).last_hidden_state  # [1, frames/2, d]
        logits = model(encoder_outputs=(encoder,), decoder_input_ids=torch.tensor([ids])).logits[0]
    h = encoder[0].double()
    rows = encoder_rows(h.shape[0])
    top = torch.topk(logits, 6, dim=-1)
    gaps = (top.values[:, :-1] - top.values[:, 1:]).double()
    fixed = FIXED_IDS + ([eos] if eos not in FIXED_IDS else [])
    double = copy.deepcopy(model).double()
    torch.set_default_dtype(torch.float64)  # the causal mask's fill value must fit
    try:
        with torch.inference_mode():
            encoder64 = double.model.encoder(torch.from_numpy(features).double()).last_hidden_state
            logits64 = double(encoder_outputs=(encoder64,), decoder_input_ids=torch.tensor([ids])).logits[0]
    finally:
        torch.set_default_dtype(torch.float32)
    return {
        "float32_error": {"encoder": float((encoder.double() - encoder64).abs().max()),
                          "logits": float((logits.double() - logits64).abs().max())},
        "encoder": {
            "shape": list(encoder.shape),
            "rows": rows,
            "values": [[round(float(v), 7) for v in encoder[0, r]] for r in rows],
            "mean": float(h.mean()),
            "std": float(h.std(unbiased=False)),
        },
        "decoder": {
            "ids": ids,
            "top5_ids": top.indices[:, :5].tolist(),
            "top5_logits": [[round(float(v), 6) for v in row[:5]] for row in top.values],
            "top6_gaps": [[round(float(v), 6) for v in row] for row in gaps],
            "min_top6_gap": float(gaps.min()),
            "fixed_ids": fixed,
            "fixed_logits": [[round(float(v), 6) for v in row] for row in logits[:, fixed]],
        },
    }


def sinusoids(length, channels, base=10000.0):
    # Whisper's encoder positions: sines then cosines, frequencies base^(-i / (channels/2 - 1)).
    step = math.log(base) / (channels // 2 - 1)
    inv = torch.exp(-step * torch.arange(channels // 2, dtype=torch.float32))
    t = torch.arange(length, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


def alt_config():
    return WhisperConfig(vocab_size=512, num_mel_bins=128, d_model=48, encoder_layers=3, decoder_layers=1,
                         encoder_attention_heads=6, decoder_attention_heads=4, encoder_ffn_dim=96,
                         decoder_ffn_dim=80, max_source_positions=200, max_target_positions=64,
                         activation_function="gelu", pad_token_id=2, bos_token_id=2, eos_token_id=2,
                         decoder_start_token_id=3, begin_suppress_tokens=[220, 2], suppress_tokens=[])


def alt_model(seed):
    torch.manual_seed(seed)
    config = alt_config()
    model = WhisperForConditionalGeneration(config).eval()
    with torch.no_grad():
        enc, dec = model.model.encoder, model.model.decoder
        enc.embed_positions.weight.copy_(sinusoids(config.max_source_positions, config.d_model))
        enc.conv1.weight.mul_(10)
        enc.conv2.weight.mul_(4)
        for layer in dec.layers:
            layer.encoder_attn.q_proj.weight.mul_(18)
            layer.encoder_attn.k_proj.weight.mul_(18)
            layer.encoder_attn.v_proj.weight.mul_(8)
            layer.encoder_attn.out_proj.weight.mul_(8)
        dec.layer_norm.weight.mul_(20)
    return model


ALT_IDS = [3, 5, 100, 7, 250, 511, 42, 2, 9, 300, 64, 17]


def main():
    torch.set_num_threads(1)
    out = {"created_by": "tools/codegen/whisper/make_model_goldens.py", "transformers": transformers.__version__,
           "torch": torch.__version__, "fixtures": {}}

    # The shared fixture, as it is.
    model = WhisperForConditionalGeneration.from_pretrained(MAIN).eval()
    speech = json.load(open(os.path.join(MAIN, "speech.json")))
    ids = speech["cases"][0]["greedy_ids"]
    features = np.load(os.path.join(MAIN, "features", "en_16k.npy"))
    out["fixtures"]["whisper"] = {"features": "features/en_16k.npy",
                                  "ids_from": "speech.json cases[0].greedy_ids",
                                  **goldens(model, features, ids, model.config.eos_token_id)}

    # The alternative fixture: made, saved, reloaded, then run.
    os.makedirs(ALT, exist_ok=True)
    extractor = WhisperFeatureExtractor(feature_size=128, chunk_length=4)
    features = extractor(read_wav(os.path.join(MAIN, "audio", "en_16k.wav")), sampling_rate=16000,
                         return_tensors="np").input_features.astype(np.float32)
    assert features.shape == (1, 128, 400), features.shape
    for seed in range(100):
        model = alt_model(seed)
        g = goldens(model, features, ALT_IDS, model.config.eos_token_id)
        if g["decoder"]["min_top6_gap"] > GAP_THRESHOLD:
            break
    else:
        raise SystemExit("no seed gives top-6 gaps above %g" % GAP_THRESHOLD)
    model.save_pretrained(ALT, safe_serialization=True)
    extractor.save_pretrained(ALT)
    np.save(os.path.join(ALT, "features.npy"), features)
    model = WhisperForConditionalGeneration.from_pretrained(ALT).eval()
    out["fixtures"]["whisper_alt"] = {"features": "features.npy", "seed": seed, "ids_from": "ALT_IDS",
                                      **goldens(model, features, ALT_IDS, model.config.eos_token_id)}

    with open(os.path.join(MAIN, "model_golden.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for name, g in out["fixtures"].items():
        print(name, "min top-6 gap", g["decoder"]["min_top6_gap"], "encoder std", g["encoder"]["std"])


if __name__ == "__main__":
    main()
