// Training data: parallel text encoded to ids once, then served as token-bucketed batches.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "text/tokenizer.h"

namespace ordo::train {

// ids of one SentencePiece model as a Marian vocabulary: spm ids as they are (</s> = 0,
// <unk> = 1 by the way the model is trained), then <pad> appended as the last id.
struct MarianVocab {
  int64_t eos = 0;
  int64_t unk = 1;
  int64_t pad = 0;   // = number of spm pieces
  int64_t size = 0;  // pieces + pad
};

struct Example {
  std::vector<int64_t> source;  // ends with </s>
  std::vector<int64_t> target;  // ends with </s>
};

struct Batch {
  at::Tensor source, source_mask;  // [n, src_len] (pad, 0)
  at::Tensor decoder_input;        // [n, tgt_len]: decoder start (= pad) + target[:-1]
  at::Tensor labels;               // [n, tgt_len]: target, pad where there is none
  int64_t target_tokens = 0;
  int64_t source_tokens = 0;
};

// Reads two aligned files and encodes them; lines longer than `max_tokens` pieces are
// skipped (counted in `skipped`). Throws ordo::Error naming the file on a line-count mismatch.
// The lines of a text file, or with "FILE.jsonl#FIELD" the string FIELD of each JSON line
// (newlines inside it become spaces, so that one example stays one line for `ordo`).
// `limit` > 0 reads at most that many. Throws ordo::Error naming the file and line.
std::vector<std::string> read_text_column(const std::string& spec, int64_t limit = 0);

// Both sides go through the model's own tokenizer (joint vocabulary), as at inference.
std::vector<Example> load_parallel(const std::string& source_path, const std::string& target_path,
                                   const text::Tokenizer& tokenizer, int64_t max_tokens, int64_t* skipped);

// Groups examples of similar length so that each batch holds at most `max_tokens` tokens
// (padded, on the longer side), in an order shuffled by `seed` + epoch.
class Batcher {
 public:
  Batcher(const std::vector<Example>& examples, int64_t max_tokens, const MarianVocab& vocab);
  // Batches of `epoch` in training order (deterministic for a given seed and epoch).
  std::vector<std::vector<size_t>> epoch_order(uint64_t seed, int64_t epoch) const;
  Batch make(const std::vector<size_t>& members) const;

 private:
  const std::vector<Example>& examples_;
  int64_t max_tokens_;
  MarianVocab vocab_;
};

}  // namespace ordo::train
