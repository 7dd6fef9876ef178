// The logits processors of Hugging Face generate(), applied in the same order, so that the
// same settings pick the same tokens and give the same beam scores.
#pragma once

#include <memory>
#include <vector>

#include <ATen/ATen.h>

#include "search/generation_settings.h"

namespace ordo::search {

class LogitsProcessor {
 public:
  virtual ~LogitsProcessor() = default;
  // sequences: [rows, cur_len] int64 (decoder start included); scores: [rows, vocab], modified
  // in place.
  virtual void apply(const at::Tensor& sequences, at::Tensor& scores) const = 0;
};

class LogitsProcessorList {
 public:
  explicit LogitsProcessorList(const GenerationSettings& settings);
  void apply(const at::Tensor& sequences, at::Tensor& scores) const {
    for (const auto& processor : processors_) processor->apply(sequences, scores);
  }

 private:
  std::vector<std::unique_ptr<LogitsProcessor>> processors_;
};

// The tokens that would complete an n-gram already present in `tokens` (HF's
// NoRepeatNGramLogitsProcessor for one row).
std::vector<int64_t> banned_ngram_tokens(const std::vector<int64_t>& tokens, int64_t ngram_size);

}  // namespace ordo::search
