#!/usr/bin/python3
"""The CTranslate2 side of the Whisper speed comparison (tools/bench/whisper/bench.py; never part of
ordo, run only where CTranslate2's Python package imports).

  ct2_whisper.py convert HF_DIR OUT_DIR float32|int8        # needs transformers 4.31 on PYTHONPATH
  ct2_whisper.py run CT2_DIR WAV --compute-type T --threads N --text-tokens L [--batch-size B]
                 [--windows overlapping|fixed] [--mel-filters NPZ]
  ct2_whisper.py check HF_DIR WAV [--mel-filters NPZ]       # this log-mel against WhisperFeatureExtractor

convert: CTranslate2's own TransformersConverter (its WhisperLoader: the spec mapping, validate,
quantize, save), told to build transformers' slow WhisperTokenizer, since the fast one needs the
`tokenizers` package, and loading with `torch_dtype` (transformers 4.31's keyword for `dtype`).

run: what an application on CTranslate2 does with a WAV file, timed in parts inside one process:
read the 16 kHz mono s16 samples; cut them into 30 s windows (--windows overlapping: one every
20 s, as transformers' ASR pipeline with chunk_length_s=30 and ordo without timestamps cut them;
fixed: back to back); compute their log-mel features with numpy (vectorized over a window's frames;
WhisperFeatureExtractor's arithmetic, see `check`, with openai-whisper's mel_filters.npz, the bank
whisper.cpp's converter embeds); decode them in batches of B with Whisper.generate (greedy; prompt
<|startoftranscript|><|en|><|transcribe|><|notimestamps|>;
suppress_tokens [-1] and suppress_blank as generation_config; max_length 2 L, which CTranslate2
turns into at most L new tokens). The windows are independent: no previous-text prompt, no seeking
(as ordo's windows without timestamps); merging the texts of overlapping windows (a longest common
run of tokens) is left out. torch is kept out of the process: ctranslate2 imports it when it can,
and applications on it do not need it. Prints one JSON line: windows, generated tokens (ids below
<|endoftext|>), and seconds for loading, reading + features, and generate.
"""
import argparse
import json
import sys
import time
import wave

import numpy as np

SAMPLE_RATE = 16000
WINDOW = 30 * SAMPLE_RATE
N_FFT, HOP = 400, 160
EOT = 50257
DEFAULT_FILTERS = "/work/peers/src/openai-whisper/whisper/assets/mel_filters.npz"


def read_wav(path):
    with wave.open(path, "rb") as w:
        if w.getframerate() != SAMPLE_RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
            sys.exit(f"ct2_whisper: {path}: want 16 kHz mono s16 (make_clip.sh writes it)")
        data = w.readframes(w.getnframes())
    return np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768.0


def window_plan(total, overlap):
    """(start, length) of each 30 s window over `total` samples. overlap: transformers 4.31's ASR
    pipeline with chunk_length_s=30 (its chunk_iter; stride chunk_length_s / 6 = 5 s on each side,
    so a window every 20 s), which ordo's windows without timestamps follow; else back to back."""
    if total <= WINDOW:
        return [(0, total)]
    if not overlap:
        return [(start, min(WINDOW, total - start)) for start in range(0, total, WINDOW)]
    stride = WINDOW // 6
    plan = []
    for start in range(0, total, WINDOW - 2 * stride):
        end = start + WINDOW
        if min(end, total) - start > (0 if start == 0 else stride):
            plan.append((start, min(end, total) - start))
        if end > total:
            break
    return plan


def log_mel(samples, plan, filters):
    """[len(plan), 80, 3000] features of the windows (start, length) of samples: WhisperFeatureExtractor's
    log-mel (the window zero-padded to 30 s; centred reflect-padded STFT, periodic Hann, power, slaney
    mel, log10 clamped to its max - 8, (x + 4) / 4, the last frame dropped). One window at a time, so
    that its float64 frames (10 MB) are all the memory it adds."""
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    out = np.empty((len(plan), filters.shape[0], WINDOW // HOP), dtype=np.float32)
    window = np.empty(WINDOW, dtype=np.float32)
    for i, (start, length) in enumerate(plan):
        window[:length] = samples[start:start + length]
        window[length:] = 0.0
        padded = np.pad(window, N_FFT // 2, mode="reflect")
        frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP]  # [3001, 400]
        power = np.abs(np.fft.rfft(frames * hann, n=N_FFT, axis=-1)) ** 2  # [3001, 201]
        log = np.log10(np.maximum(filters @ power.T, 1e-10))[:, :-1]  # [80, 3000]
        out[i] = (np.maximum(log, log.max() - 8.0) + 4.0) / 4.0
    return out


def load_filters(path, n_mels=80):
    with np.load(path) as f:
        return f[f"mel_{n_mels}"]


def convert(hf_dir, out_dir, quantization):
    import transformers
    from ctranslate2.converters.transformers import TransformersConverter

    tub = transformers.tokenization_utils_base  # without `tokenizers`: a stand-in AddedToken, given the real one's
    if tub.AddedToken.__str__ is object.__str__:  # str/eq/hash so that special tokens map to their ids
        tub.AddedToken.__str__ = lambda self: self.content
        tub.AddedToken.__eq__ = lambda self, other: str(self) == str(other)
        tub.AddedToken.__hash__ = lambda self: hash(self.content)

    class Converter(TransformersConverter):
        def load_model(self, model_class, path, **kwargs):
            dtype = kwargs.pop("dtype", None)
            if dtype is not None:
                kwargs["torch_dtype"] = dtype
            return model_class.from_pretrained(path, **kwargs)

        def load_tokenizer(self, tokenizer_class, path, **kwargs):
            return transformers.WhisperTokenizer.from_pretrained(path, **kwargs)

    Converter(hf_dir).convert(out_dir, quantization=quantization, force=True)
    print(json.dumps({"converted": hf_dir, "out": out_dir, "quantization": quantization}))


def run(args):
    t0 = time.perf_counter()
    # ctranslate2 imports torch when it can (for its converters); an application on it (faster-whisper)
    # does not need torch, and Debian's would add 0.8 s and 200 MB to this process: keep it out.
    sys.modules["torch"] = None
    import ctranslate2

    model = ctranslate2.models.Whisper(args.model, device="cpu", compute_type=args.compute_type,
                                       intra_threads=args.threads, inter_threads=1)
    t1 = time.perf_counter()
    samples = read_wav(args.wav)
    plan = window_plan(len(samples), args.windows == "overlapping")
    features = log_mel(samples, plan, load_filters(args.mel_filters))
    t2 = time.perf_counter()
    prompt = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    tokens = 0
    for b in range(0, len(features), args.batch_size):
        batch = np.ascontiguousarray(features[b:b + args.batch_size])
        results = model.generate(ctranslate2.StorageView.from_array(batch), [prompt] * len(batch), beam_size=1,
                                 max_length=2 * args.text_tokens, suppress_blank=True, suppress_tokens=[-1])
        for r in results:
            tokens += sum(1 for i in r.sequences_ids[0] if i < EOT)
    t3 = time.perf_counter()
    print(json.dumps({"engine": "ctranslate2", "windows": len(features), "tokens": tokens,
                      "load_s": t1 - t0, "features_s": t2 - t1, "generate_s": t3 - t2}))


def check(args):
    from transformers import WhisperFeatureExtractor

    samples = read_wav(args.wav)
    plan = window_plan(len(samples), True)
    fe = WhisperFeatureExtractor.from_pretrained(args.hf_dir)
    t0 = time.perf_counter()
    ref = np.stack([fe(samples[start:start + length], sampling_rate=SAMPLE_RATE, return_tensors="np").input_features[0]
                    for start, length in plan])
    t1 = time.perf_counter()
    mine = log_mel(samples, plan, load_filters(args.mel_filters))
    t2 = time.perf_counter()
    print(json.dumps({"windows": len(plan), "max_abs_diff": float(np.abs(ref - mine).max()),
                      "WhisperFeatureExtractor_s_per_window": (t1 - t0) / len(plan),
                      "numpy_s_per_window": (t2 - t1) / len(plan)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert")
    c.add_argument("hf_dir")
    c.add_argument("out_dir")
    c.add_argument("quantization", choices=["float32", "int8"])
    r = sub.add_parser("run")
    r.add_argument("model")
    r.add_argument("wav")
    r.add_argument("--compute-type", default="float32")
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--batch-size", type=int, default=32)
    r.add_argument("--text-tokens", type=int, default=100, help="new tokens per window")
    r.add_argument("--mel-filters", default=DEFAULT_FILTERS)
    r.add_argument("--windows", choices=["overlapping", "fixed"], default="overlapping",
                   help="30 s windows every 20 s as ordo (and transformers' pipeline), or back to back")
    k = sub.add_parser("check")
    k.add_argument("hf_dir")
    k.add_argument("wav")
    k.add_argument("--mel-filters", default=DEFAULT_FILTERS)
    args = ap.parse_args()
    if args.cmd == "convert":
        convert(args.hf_dir, args.out_dir, args.quantization)
    elif args.cmd == "run":
        run(args)
    else:
        check(args)


if __name__ == "__main__":
    main()
