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
  // Whether each processed score is a non-decreasing function of that score alone (masks,
  // forced tokens, penalties): then an upper bound stays one after processing, and a row's
  // largest over exact scores and bounds is the largest of the exact scores whenever it lands on
  // an exact one (StepModel::next_logits_bounded).
  virtual bool order_preserving() const { return false; }
  // Whether it takes a constant off each row (log-softmax): order-preserving up to the ties its
  // rounding makes between scores less than a few ulps apart.
  virtual bool shifts_rows() const { return false; }
};

class LogitsProcessorList {
 public:
  explicit LogitsProcessorList(const GenerationSettings& settings);
  void apply(const at::Tensor& sequences, at::Tensor& scores) const {
    for (const auto& processor : processors_) processor->apply(sequences, scores);
  }
  bool order_preserving() const {
    for (const auto& processor : processors_)
      if (!processor->order_preserving()) return false;
    return true;
  }
  bool shifts_rows() const {
    for (const auto& processor : processors_)
      if (processor->shifts_rows()) return true;
    return false;
  }

 private:
  std::vector<std::unique_ptr<LogitsProcessor>> processors_;
};

// The tokens that would complete an n-gram already present in `tokens` (HF's
// NoRepeatNGramLogitsProcessor for one row).
std::vector<int64_t> banned_ngram_tokens(const std::vector<int64_t>& tokens, int64_t ngram_size);

}  // namespace ordo::search
