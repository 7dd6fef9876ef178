#!/usr/bin/env python3
"""Goldens for interactive and controlled decoding, made by Hugging Face transformers 4.31.

For each fixture folder in tests/data/hf given on the command line (default: marian_opus_en_mg,
m2m100, pegasus) this writes <fixture>/interactive.json with what transformers itself computes:

- target_prefix: generate() with decoder_input_ids = [decoder_start] + prefix ids, greedy and beam 4
  (num_return_sequences 4). The prefix ids are the target-side encoding of the prefix text
  (tokenizer(text_target=...)) without its final </s>; for M2M100 that encoding starts with the
  target language code, which is what the forced BOS would have put there.
- constrained: generate(force_words_ids=..., num_beams=4, num_return_sequences=4), i.e.
  ConstrainedBeamSearchScorer, with one and with two forced phrases (each phrase the target-side
  encoding of a word, without special tokens).
- teacher_forced: the log-probability of given targets under the model, one forward pass with
  decoder_input_ids = [decoder_start] + labels[:-1], labels = tokenizer(text_target=...) with </s>:
  log_softmax of the raw logits at each position, gathered at the label (no logits processor),
  per token and summed.

Everything else in the folder's generation_config.json stays in force, as in golden.json; every
case records the exact generate() kwargs. Run on CPU, float32, one thread. How to assemble
transformers 4.31 as pure Python on Debian's torch: ../shared/peers/README.md section 3, e.g.

  PYTHONPATH=/opt/peers/hf-pylib HF_HUB_OFFLINE=1 /usr/bin/python3 \
      tools/codegen/goldens/make_interactive_goldens.py [fixture ...]
"""
import json
import os
import sys

import torch
import transformers
from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "hf")

MAX_NEW_TOKENS = 20
# Target-side words per fixture: prefixes of 1-3 tokens, forced phrases, and a human-style target.
PLAN = {
    "marian_opus_en_mg": {
        "prefixes": ["Ny", "Aiza no", "Ny trano"],
        "force": ["trano", "fiaran-dalamby"],
        "human": {2: "Aiza no misy ny gara?", 0: "Nambolen'ny mpiara-monina amiko hazo paoma telo."},
    },
    "m2m100": {
        "prefixes": ["Der", "Wo", "Das"],
        "force": ["Haus", "Bahnhof"],
        "human": {2: "Wo ist der Bahnhof?", 0: "Mein Nachbar hat drei Apfelbäume gepflanzt."},
    },
    "pegasus": {
        "prefixes": ["The", "Where is", "My neighbour has"],
        "force": ["house", "station"],
        "human": {2: "Where is the station?", 0: "A neighbour planted apple trees."},
    },
}
SENTENCES = [0, 2, 3]  # indices into golden.json's sentences


def f32(x):
    """A float32 value; null for -inf (JSON has no infinities), which ConstrainedBeamSearchScorer
    gives a returned sequence whose constraints are unmet."""
    v = float(torch.tensor(x, dtype=torch.float32).item())
    return v if v == v and abs(v) != float("inf") else None


def main(fixtures):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    for fixture in fixtures:
        folder = os.path.join(DATA, fixture)
        golden = json.load(open(os.path.join(folder, "golden.json"), encoding="utf-8"))
        plan = PLAN[fixture]
        config = AutoConfig.from_pretrained(folder)
        model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
        tok = AutoTokenizer.from_pretrained(folder, use_fast=False)
        special = golden["special_ids"]
        start = model.generation_config.decoder_start_token_id
        eos = model.generation_config.eos_token_id
        base_kwargs = {"do_sample": False, "max_new_tokens": MAX_NEW_TOKENS}
        if special.get("forced_bos_token_id") is not None:
            base_kwargs["forced_bos_token_id"] = special["forced_bos_token_id"]

        def target_ids(text, special_tokens=True):
            return tok(text_target=text, add_special_tokens=special_tokens).input_ids

        def effective(kwargs):
            cfg = model.generation_config.to_dict()
            cfg.update({k: v for k, v in kwargs.items() if k != "decoder_input_ids"})
            return {k: v for k, v in sorted(cfg.items()) if k not in ("transformers_version", "_from_model_config")}

        def generate(source, kwargs):
            enc = tok(source, return_tensors="pt")
            with torch.no_grad():
                out = model.generate(**enc, **kwargs, output_scores=True, return_dict_in_generate=True)
            seqs = out.sequences.tolist()
            result = {
                "sequences": seqs,
                "texts": tok.batch_decode(out.sequences, skip_special_tokens=True),
                "tokens": [tok.convert_ids_to_tokens(s) for s in seqs],
            }
            if getattr(out, "sequences_scores", None) is not None:
                result["sequences_scores"] = [f32(v) for v in out.sequences_scores.tolist()]
            return enc.input_ids[0].tolist(), result

        out = {
            "meta": {
                "fixture": fixture,
                "transformers_version": transformers.__version__,
                "torch_version": torch.__version__,
                "made_by": "tools/codegen/goldens/make_interactive_goldens.py",
                "max_new_tokens": MAX_NEW_TOKENS,
                "decoder_start_token_id": start,
                "eos_token_id": eos,
                "notes": "sequences start with decoder_start; beam outputs are padded with pad_token_id after EOS. "
                "prefix_ids = tokenizer(text_target=prefix).input_ids without the final </s> (M2M100: starts "
                "with the target language code). Scores are float32 values; a null sequences_score is -inf in "
                "transformers' output (a constrained sequence with its constraints unmet).",
            },
            "target_prefix": [],
            "constrained": [],
            "teacher_forced": [],
        }

        for si in SENTENCES:
            source = golden["sentences"][si]
            for prefix in plan["prefixes"]:
                prefix_ids = target_ids(prefix)
                assert prefix_ids[-1] == eos, (fixture, prefix, prefix_ids)
                prefix_ids = prefix_ids[:-1]
                decoder_input_ids = [start] + prefix_ids
                for case, extra in (("greedy", {"num_beams": 1}), ("beam4", {"num_beams": 4, "num_return_sequences": 4})):
                    kwargs = dict(base_kwargs, **extra)
                    call = dict(kwargs, decoder_input_ids=torch.tensor([decoder_input_ids]))
                    source_ids, result = generate(source, call)
                    for s in result["sequences"]:
                        assert s[: len(decoder_input_ids)] == decoder_input_ids
                    out["target_prefix"].append({
                        "sentence_index": si, "source": source, "source_ids": source_ids, "case": case,
                        "prefix": prefix, "prefix_ids": prefix_ids,
                        "prefix_tokens": tok.convert_ids_to_tokens(prefix_ids),
                        "decoder_input_ids": decoder_input_ids, "kwargs": kwargs,
                        "effective_generation_config": effective(kwargs), **result,
                    })

            for n in (1, 2):
                words = plan["force"][:n]
                force_words_ids = [target_ids(w, special_tokens=False) for w in words]
                kwargs = dict(base_kwargs, num_beams=4, num_return_sequences=4, force_words_ids=force_words_ids)
                source_ids, result = generate(source, kwargs)
                out["constrained"].append({
                    "sentence_index": si, "source": source, "source_ids": source_ids, "force_words": words,
                    "force_words_ids": force_words_ids,
                    "force_words_tokens": [tok.convert_ids_to_tokens(p) for p in force_words_ids],
                    "kwargs": kwargs, "effective_generation_config": effective(kwargs), **result,
                })

        # Teacher forcing: the golden greedy output texts and human-style targets.
        greedy = golden["generation"]["greedy"]["per_sentence"]
        pairs = [(si, greedy[si]["texts"][0], "golden_greedy_text") for si in SENTENCES]
        pairs += [(si, text, "human") for si, text in sorted(plan["human"].items())]
        for si, target, kind in pairs:
            source = golden["sentences"][si]
            enc = tok(source, return_tensors="pt")
            labels = target_ids(target)
            decoder_input_ids = [start] + labels[:-1]
            with torch.no_grad():
                logits = model(**enc, decoder_input_ids=torch.tensor([decoder_input_ids])).logits[0]
            logp = torch.log_softmax(logits.float(), dim=-1)
            log_probs = [float(logp[t, lab].item()) for t, lab in enumerate(labels)]
            out["teacher_forced"].append({
                "sentence_index": si, "source": source, "source_ids": enc.input_ids[0].tolist(), "kind": kind,
                "target": target, "labels": labels, "tokens": tok.convert_ids_to_tokens(labels),
                "decoder_input_ids": decoder_input_ids, "log_probs": log_probs,
                "score": float(sum(log_probs)),
                "loss": float(torch.nn.functional.cross_entropy(logits, torch.tensor(labels)).item()),
            })

        path = os.path.join(folder, "interactive.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(out, f, ensure_ascii=False, indent=1, allow_nan=False)
            f.write("\n")
        print(f"{path}: {len(out['target_prefix'])} prefix, {len(out['constrained'])} constrained, "
              f"{len(out['teacher_forced'])} teacher-forced cases")


if __name__ == "__main__":
    main(sys.argv[1:] or list(PLAN))
