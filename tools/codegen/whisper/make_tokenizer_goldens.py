#!/usr/bin/env python3
"""Tokenizer goldens for Whisper, made by transformers 4.31's WhisperTokenizer (slow).

Writes tests/data/hf/whisper/tokenizer_golden.json from the fixture's tokenizer files:

- encode: tokenizer.encode(text, add_special_tokens=False) and tokenize(text) of texts with
  special and timestamp tokens written in them, whitespace around them, non-ASCII text.
- prompt: get_prompt_ids(text) (<|startofprev|> + the ids of " " + text.strip()).
- decode: for id lists (a prompt before <|startoftranscript|>, special ids mid-text, a UTF-8
  character split by a timestamp, ids past the vocabulary): decode() with and without
  skip_special_tokens, and decode(decode_with_timestamps=True) both ways.

transformers here runs without the `tokenizers` package, whose AddedToken is replaced by a
dataclass lacking tokenizers' __str__ (the token's content); the script gives it that __str__,
so special tokens saved as AddedToken objects (<|endoftext|>) are read as with tokenizers
installed. Run:

  PYTHONPATH=/work/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 \
      tools/codegen/whisper/make_tokenizer_goldens.py
"""
import json
import os

from transformers import WhisperTokenizer
from transformers import tokenization_utils_base
from transformers.utils import is_tokenizers_available

if not is_tokenizers_available():
    tokenization_utils_base.AddedToken.__str__ = lambda self: self.content

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "..", "..", "tests", "data", "hf", "whisper")

ENCODE_TEXTS = [
    "Hello world, this is a test.",
    " leading space and  double  spaces\tand a tab\n",
    "a <|en|> b  <|0.00|>  c",
    "x <|endoftext|> y",
    "<|startoftranscript|><|de|><|transcribe|><|notimestamps|> Guten Tag",
    "Grüße aus Köln — 東京 🙂 naïve café",
    "It's 3.14, isn't it? We'll see... I'd say 1,000,000!",
    "",
    "   ",
]
PROMPT_TEXTS = ["  Previous sentence, with context.  ", "Ölçü 東京", ""]


def main():
    tok = WhisperTokenizer.from_pretrained(FIXTURE)
    assert tok.all_special_ids[0] == 50257, tok.all_special_ids[:3]
    out = {
        "created_by": "transformers 4.31.0 WhisperTokenizer (slow), tools/codegen/whisper/make_tokenizer_goldens.py",
        "encode": [],
        "prompt": [],
        "decode": [],
    }
    for text in ENCODE_TEXTS:
        out["encode"].append({"text": text, "ids": tok.encode(text, add_special_tokens=False),
                              "pieces": tok.tokenize(text)})
    for text in PROMPT_TEXTS:
        out["prompt"].append({"text": text, "ids": [int(i) for i in tok.get_prompt_ids(text)]})
    hello = tok.encode(" Hello world", add_special_tokens=False)
    cafe = tok.encode(" café", add_special_tokens=False)
    e_bytes = [tok.convert_tokens_to_ids(c) for c in ["Ã", "©"]]  # U+00E9's two bytes as pieces
    cases = [
        [50258, 50259, 50359, 50363] + hello + [50257],
        [50361] + tok.encode(" some prompt", add_special_tokens=False) + [50258, 50259, 50359, 50364] + hello
        + [50414, 50257],
        [50361] + tok.encode(" prompt without start", add_special_tokens=False),
        [50258, 50259, 50359, 50364] + hello + [50414, 50414] + cafe + [50500, 50257],
        e_bytes[:1] + [50364] + e_bytes[1:] + hello,
        e_bytes[:1] + [50259] + e_bytes[1:],
        e_bytes + [50257] + hello,
        hello + [51864, 51865, 60000] + cafe,
        [50257, 50257],
        [],
    ]
    for ids in cases:
        out["decode"].append({
            "ids": ids,
            "skip_special": tok.decode(ids, skip_special_tokens=True),
            "keep_special": tok.decode(ids, skip_special_tokens=False),
            "with_timestamps_skip_special": tok.decode(ids, skip_special_tokens=True, decode_with_timestamps=True),
            "with_timestamps_keep_special": tok.decode(ids, skip_special_tokens=False, decode_with_timestamps=True),
        })
    path = os.path.join(FIXTURE, "tokenizer_golden.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
