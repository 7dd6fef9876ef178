#!/usr/bin/env python3
"""Token-level timestamps for Whisper, made by transformers 4.31 (tests/speech/).

generate(input_features, return_token_timestamps=True) on the shared `whisper` fixture
(tests/data/hf/whisper: its features/*.npy and its generation_config.json, whose alignment_heads
are made up for the 2-layer decoder): greedy, max_new_tokens 32, each case from a fresh copy of
the generation config (4.31's generate() mutates it). For each case: the returned ids, the
token_timestamps (seconds, float32; element 0 is the decoder start's 0), and the words that
transformers' _collate_word_timestamps makes of the text tokens (ids below <|endoftext|>) with
those times (start = its first token's time, end = the time of the token after its last).
"prompted": generate(prompt_ids=tokenizer.get_prompt_ids(PROMPT)) on the en clip (greedy,
max_new_tokens 32, transcribe, en, with and without timestamps): the ids it returns (from
<|startofprev|>), as openai-whisper's initial_prompt feeds the first window.

Output: tests/data/speech/whisper_token_timestamps.json. CPU, float32, one thread:

  PYTHONPATH=/work/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 tools/codegen/whisper/make_speech_goldens.py
"""
import copy
import json
import os

import numpy as np
import torch
import transformers
from transformers import GenerationConfig, WhisperForConditionalGeneration, WhisperTokenizer
from transformers.models.whisper.tokenization_whisper import _combine_tokens_into_words

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "data", "hf", "whisper")
OUT = os.path.join(ROOT, "tests", "data", "speech", "whisper_token_timestamps.json")

PROMPT = "Hello world, this is a test."

CASES = [
    ("en", "en", "transcribe", False),
    ("en", "en", "transcribe", True),
    ("de", "de", "transcribe", False),
    ("fr", "fr", "translate", False),
]


def main():
    torch.set_num_threads(1)
    model = WhisperForConditionalGeneration.from_pretrained(FIXTURE).eval()
    tokenizer = WhisperTokenizer.from_pretrained(FIXTURE)
    # 4.31 reads tokenizer_config.json's {"__type": "AddedToken"} special tokens without ids.
    tokenizer.bos_token = tokenizer.eos_token = tokenizer.unk_token = "<|endoftext|>"
    saved = GenerationConfig.from_pretrained(FIXTURE)
    eot = saved.eos_token_id
    cases = []
    for clip, language, task, timestamps in CASES:
        features = torch.from_numpy(np.load(os.path.join(FIXTURE, "features", clip + "_16k.npy")))
        with torch.no_grad():
            out = model.generate(features, generation_config=copy.deepcopy(saved), language=language, task=task,
                                 return_timestamps=timestamps, return_token_timestamps=True, num_beams=1,
                                 do_sample=False, max_new_tokens=32)
        ids = out["sequences"][0].tolist()
        times = out["token_timestamps"][0].tolist()
        positions = [i for i, t in enumerate(ids) if t < eot]
        text_tokens = [ids[i] for i in positions]
        words, _, indices = _combine_tokens_into_words(tokenizer, text_tokens, "english")
        collated = []
        for word, idx in zip(words, indices):
            first, last = positions[idx[0]], positions[idx[-1]]
            end = times[last + 1] if last + 1 < len(times) else None
            collated.append({"word": word, "start": times[first], "end": end, "token_indices": [positions[k] for k in idx]})
        cases.append({"clip": clip, "language": language, "task": task, "timestamps": timestamps, "ids": ids,
                      "token_timestamps": times, "words": collated})
    prompted = []
    prompt_ids = torch.tensor(tokenizer.get_prompt_ids(PROMPT))
    features = torch.from_numpy(np.load(os.path.join(FIXTURE, "features", "en_16k.npy")))
    for timestamps in (False, True):
        with torch.no_grad():
            ids = model.generate(features, generation_config=copy.deepcopy(saved), language="en", task="transcribe",
                                 return_timestamps=timestamps, prompt_ids=prompt_ids, num_beams=1, do_sample=False,
                                 max_new_tokens=32)
        prompted.append({"clip": "en", "prompt": PROMPT, "prompt_ids": prompt_ids.tolist(), "timestamps": timestamps,
                         "ids": ids[0].tolist()})
    result = {
        "created_by": "transformers " + transformers.__version__,
        "script": "tools/codegen/whisper/make_speech_goldens.py",
        "model_dir": "tests/data/hf/whisper",
        "alignment_heads": saved.alignment_heads,
        "median_filter_width": model.config.median_filter_width,
        "cases": cases,
        "prompted": prompted,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
