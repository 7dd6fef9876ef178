"""Goldens for tests/audio/log_mel_test.cpp beyond the fixture's 80-bin features (those are
tests/data/hf/whisper/features/*.npy): transformers 4.31's WhisperFeatureExtractor with 128 mel
bins (whisper-large-v3's preprocessor_config.json) on two of the fixture's clips, a short one
(mostly padding) and the 44 s one (only its first 30 s count). A 128 x 3000 array is 1.5 MB, so
a golden keeps every 997th value (row-major), the first 4 x 6 corner, and the whole array's
mean and standard deviation.
Run: PYTHONPATH=/work/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 tools/codegen/whisper/make_mel_goldens.py
"""
import json
import os
import wave

import numpy as np
import transformers
from transformers import WhisperFeatureExtractor

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
audio = os.path.join(root, "tests", "data", "hf", "whisper", "audio")


def read_wav(path):
    with wave.open(path) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1 and w.getframerate() == 16000
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0


def golden(samples, feature_size):
    extractor = WhisperFeatureExtractor(feature_size=feature_size)
    features = extractor(samples, sampling_rate=16000, return_tensors="np").input_features[0]
    flat = features.reshape(-1)
    every = 997
    return {
        "shape": list(features.shape),
        "every": every,
        "values": [float(v) for v in flat[::every]],
        "corner_4x6": features[:4, :6].astype(float).tolist(),
        "mean": float(features.astype(np.float64).mean()),
        "std": float(features.astype(np.float64).std()),
    }


out = {
    "created_by": "tools/codegen/whisper/make_mel_goldens.py",
    "transformers": transformers.__version__,
    "en_16k_128_mels": golden(read_wav(os.path.join(audio, "en_16k.wav")), 128),
    "en_long_16k_128_mels": golden(read_wav(os.path.join(audio, "en_long_16k.wav")), 128),
}
with open(os.path.join(root, "tests", "data", "audio", "mel_goldens.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
