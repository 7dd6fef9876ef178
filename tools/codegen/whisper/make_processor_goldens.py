#!/usr/bin/env python3
"""Goldens for Whisper's generation rules, made by transformers 4.31.

Writes tests/data/hf/whisper/processor_golden.json: for small Whisper-like generation configs
(a vocabulary of 40 ids so the file stays small: <|endoftext|> 10, <|startoftranscript|> 11,
<|en|> 12, <|de|> 13, <|translate|> 14, <|transcribe|> 15, <|startoflm|> 16, <|startofprev|> 17,
<|notimestamps|> 18, timestamps 19..39), each "setup" is one WhisperForConditionalGeneration
.generate() call (language, task, return_timestamps, prompt_ids, max_new_tokens 8) on a tiny
random model. generate() is stopped where it would start searching (greedy_search is replaced),
and what it built is recorded:

- decoder_start, max_length, forced_decoder_ids, and the logits processors in their order with
  their parameters (begin indices), as 4.31's generate() / _get_logits_processor made them;
- applications: that processor list applied to seeded random scores [3 rows, 40] (some rows
  with raised timestamp logits, so the "timestamps' total probability" rule fires) after
  decoder sequences of every length from 1 to past the begin indices, whose tails mix text,
  single and paired timestamps. The scores are quarters (exact in float32), written as
  quarters_in (integers: 4 x score); what the processors made of each row is a mask string,
  one character an id: '.' unchanged, 'x' set to -inf, '0' set to 0 (a forced token).

The C++ test (tests/search/whisper_rules_test.cpp) rebuilds the settings with
search::apply_whisper_rules from the same generation config and must reproduce every output.
Run:

  PYTHONPATH=/work/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 \
      tools/codegen/whisper/make_processor_goldens.py
"""
import copy
import json
import os

import torch
from transformers import GenerationConfig, WhisperConfig, WhisperForConditionalGeneration
from transformers.generation.utils import GenerationMixin

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "..", "tests", "data", "hf", "whisper", "processor_golden.json")

VOCAB = 40
EOT, SOT, EN, DE, TRANSLATE, TRANSCRIBE, STARTOFLM, STARTOFPREV, NOTIMESTAMPS = 10, 11, 12, 13, 14, 15, 16, 17, 18
TIMESTAMP_BEGIN = NOTIMESTAMPS + 1

COMMON = {
    "bos_token_id": EOT,
    "decoder_start_token_id": SOT,
    "eos_token_id": EOT,
    "pad_token_id": EOT,
    "max_length": 448,
    "suppress_tokens": [1, 2, 7, SOT, TRANSLATE, TRANSCRIBE, STARTOFLM, STARTOFPREV],
    "begin_suppress_tokens": [3, EOT],
    "no_timestamps_token_id": NOTIMESTAMPS,
    "max_initial_timestamp_index": 1,
    "return_timestamps": False,
}
CONFIGS = {
    "multilingual": {
        **COMMON,
        "is_multilingual": True,
        "forced_decoder_ids": [[1, None], [2, TRANSCRIBE]],
        "lang_to_id": {"<|en|>": EN, "<|de|>": DE},
        "task_to_id": {"translate": TRANSLATE, "transcribe": TRANSCRIBE},
    },
    "english_only": {
        **COMMON,
        "is_multilingual": False,
        "forced_decoder_ids": [[1, NOTIMESTAMPS]],
        "max_initial_timestamp_index": 3,
    },
}
PROMPT = [STARTOFPREV, 4, 5, 6]
SETUPS = {
    "multilingual": [
        {"language": "en", "task": "transcribe"},
        {"task": "translate"},
        {"language": "de", "task": "transcribe", "return_timestamps": True},
        {"return_timestamps": True},
        {},
        {"language": "en", "task": "transcribe", "prompt_ids": PROMPT},
        {"language": "de", "task": "translate", "return_timestamps": True, "prompt_ids": PROMPT},
        {"prompt_ids": PROMPT},
    ],
    "english_only": [
        {},
        {"return_timestamps": True},
        {"return_timestamps": True, "prompt_ids": PROMPT},
    ],
}


class Stop(Exception):
    pass


captured = {}


def capture(self, input_ids, logits_processor=None, stopping_criteria=None, **kwargs):
    captured["input_ids"] = input_ids.tolist()
    captured["processors"] = logits_processor
    captured["max_length"] = stopping_criteria[0].max_length
    raise Stop()


def describe(processor):
    out = {"class": type(processor).__name__}
    for key in ("suppress_tokens", "begin_suppress_tokens", "begin_index", "force_token_map", "eos_token_id",
                "no_timestamps_token_id", "timestamp_begin", "max_initial_timestamp_index"):
        if hasattr(processor, key):
            value = getattr(processor, key)
            out[key] = sorted(value.items()) if isinstance(value, dict) else value
    return out


def tails(length, begin, generator):
    """Three decoder sequences of `length` tokens (start included): the forced prefix, then text
    and timestamps placed so that rows end in text, one timestamp and a pair."""
    rows = []
    for shape in range(3):
        row = []
        for i in range(length):
            if i < begin:
                row.append(int(torch.randint(0, VOCAB, (1,), generator=generator)))
                continue
            from_end = length - 1 - i
            stamp = (shape == 1 and from_end == 0) or (shape == 2 and from_end <= 1)
            low, high = (TIMESTAMP_BEGIN, VOCAB) if stamp else (0, EOT)
            row.append(int(torch.randint(low, high, (1,), generator=generator)))
        rows.append(row)
    return rows


def masks(before, after):
    out = []
    for row_in, row_out in zip(before.tolist(), after.tolist()):
        marks = ""
        for a, b in zip(row_in, row_out):
            if b == a:
                marks += "."
            elif b == float("-inf"):
                marks += "x"
            elif b == 0:
                marks += "0"
            else:
                raise AssertionError(f"a processor changed {a} to {b}")
        out.append(marks)
    return out


def main():
    torch.manual_seed(0)
    model_config = WhisperConfig(vocab_size=VOCAB, num_mel_bins=4, d_model=8, encoder_layers=1, decoder_layers=1,
                                 encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=8,
                                 decoder_ffn_dim=8, max_source_positions=4, max_target_positions=448,
                                 begin_suppress_tokens=None, suppress_tokens=None, decoder_start_token_id=SOT,
                                 pad_token_id=EOT, bos_token_id=EOT, eos_token_id=EOT)
    model = WhisperForConditionalGeneration(model_config).eval()
    assert getattr(model.config, "forced_decoder_ids", None) is None
    features = torch.zeros(1, 4, 8)
    GenerationMixin.greedy_search = capture
    generator = torch.Generator().manual_seed(1)
    out = {"created_by": "transformers 4.31.0, tools/codegen/whisper/make_processor_goldens.py", "vocab": VOCAB,
           "configs": {}}
    for name, config_dict in CONFIGS.items():
        config = GenerationConfig(**config_dict)
        model.generation_config = config
        setups = []
        for setup in SETUPS[name]:
            kwargs = dict(setup)
            if "prompt_ids" in kwargs:
                kwargs["prompt_ids"] = torch.tensor(kwargs["prompt_ids"])
            try:
                model.generate(features, generation_config=copy.deepcopy(config), max_new_tokens=8, **kwargs)
            except Stop:
                pass
            processors = captured["processors"]
            described = [describe(p) for p in processors]
            begins = [d.get("begin_index", 1) for d in described] + [1]
            forced_lengths = [k for d in described for k, _ in d.get("force_token_map", [])]
            longest = max(begins + forced_lengths) + 4
            applications = []
            for length in range(1, longest + 1):
                sequences = tails(length, min(length, max(begins) - 1), generator)
                sequences = [[captured["input_ids"][0][0]] + row[1:] for row in sequences]
                scores = torch.round(torch.randn(3, VOCAB, generator=generator) * 8) / 4
                scores[1, TIMESTAMP_BEGIN:] += 3.0  # timestamps likely as a group
                scores[2, TIMESTAMP_BEGIN + 2] += 8.0  # one timestamp likely on its own
                scores_in = scores.clone()
                scores_out = processors(torch.tensor(sequences), scores.clone())
                applications.append({"sequences": sequences,
                                     "quarters_in": (scores_in * 4).round().to(torch.int64).tolist(),
                                     "masks_out": masks(scores_in, scores_out)})
            setups.append({"generate_kwargs": setup, "decoder_start": captured["input_ids"][0][0],
                           "max_length": captured["max_length"], "processors": described,
                           "applications": applications})
        out["configs"][name] = {"generation_config": config_dict, "setups": setups}
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
