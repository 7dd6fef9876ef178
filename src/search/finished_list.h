// The finished hypotheses of one sentence in a beam search (Hugging Face's BeamHypotheses),
// shared by beam search and constrained beam search, and a row of a sequences tensor as ids.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "search/search.h"

namespace ordo::search {

struct Finished {
  double score;
  std::vector<int64_t> tokens;  // decoder start included, EOS not included
  bool ended_with_eos;
  at::Tensor attention;  // return_attention: [generated, layers, heads, source_len]
};

// The n-best list of one sentence (HF's BeamHypotheses).
class FinishedList {
 public:
  FinishedList(int64_t beams, double length_penalty, bool early_stopping)
      : beams_(beams), length_penalty_(length_penalty), early_stopping_(early_stopping) {}

  void add(std::vector<int64_t> tokens, double sum_log_probs, bool ended_with_eos, at::Tensor attention) {
    const double score = sum_log_probs / std::pow(static_cast<double>(tokens.size()), length_penalty_);
    if (static_cast<int64_t>(list_.size()) >= beams_ && score <= worst_) return;
    list_.push_back({score, std::move(tokens), ended_with_eos, std::move(attention)});
    if (static_cast<int64_t>(list_.size()) > beams_) {
      // Drop the worst (the earliest added among equals, as Python's sort of (score, index)).
      std::vector<size_t> order(list_.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return list_[a].score < list_[b].score; });
      worst_ = list_[order[1]].score;
      list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(order[0]));
    } else {
      worst_ = std::min(score, worst_);
    }
  }

  bool is_done(double best_sum_log_probs, int64_t cur_len) const {
    if (static_cast<int64_t>(list_.size()) < beams_) return false;
    if (early_stopping_) return true;
    return worst_ >= best_sum_log_probs / std::pow(static_cast<double>(cur_len), length_penalty_);
  }

  // The best `n`, best first; among equal scores the later added first (HF sorts ascending
  // with a stable sort and pops from the end).
  std::vector<Finished> best(int64_t n) const {
    std::vector<Finished> sorted = list_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Finished& a, const Finished& b) { return a.score < b.score; });
    std::vector<Finished> out;
    for (int64_t i = 0; i < n && !sorted.empty(); ++i) {
      out.push_back(sorted.back());
      sorted.pop_back();
    }
    return out;
  }

 private:
  int64_t beams_;
  double length_penalty_;
  bool early_stopping_;
  double worst_ = 1e9;
  std::vector<Finished> list_;
};

inline std::vector<int64_t> row_tokens(const at::Tensor& sequences, int64_t row) {
  const at::Tensor r = sequences[row].contiguous();
  return std::vector<int64_t>(r.data_ptr<int64_t>(), r.data_ptr<int64_t>() + r.numel());
}

// Each input's `n` best finished hypotheses as the searches return them: ids without the
// decoder start, EOS appended where it ended one; the score in float32, as HF reports
// sequences_scores.
inline std::vector<std::vector<SearchHypothesis>> best_hypotheses(const std::vector<FinishedList>& finished, int64_t n,
                                                                  int64_t eos_token_id) {
  std::vector<std::vector<SearchHypothesis>> results(finished.size());
  for (size_t b = 0; b < finished.size(); ++b) {
    for (const Finished& f : finished[b].best(n)) {
      SearchHypothesis hyp;
      hyp.ids.assign(f.tokens.begin() + 1, f.tokens.end());
      if (f.ended_with_eos) hyp.ids.push_back(eos_token_id);
      hyp.score = static_cast<float>(f.score);
      hyp.attention = f.attention;
      results[b].push_back(std::move(hyp));
    }
  }
  return results;
}

}  // namespace ordo::search
