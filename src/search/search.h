// Greedy and beam search over a decoder seen only through StepModel. Both reproduce Hugging
// Face generate() (transformers 4.31) for the same GenerationSettings.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "search/generation_settings.h"

namespace ordo::search {

// What a search needs from a model: "scores for the next token of these hypotheses" and
// "keep only these hypotheses, in this order".
class StepModel {
 public:
  virtual ~StepModel() = default;
  // tokens: [rows, 1] int64, the newest token of each hypothesis -> logits [rows, vocab].
  virtual at::Tensor next_logits(const at::Tensor& tokens) = 0;
  // Keeps hypotheses `rows` (int64 indices into the current rows), in that order.
  virtual void select(const at::Tensor& rows) = 0;
  // With GenerationSettings::return_attention: the cross-attention weights of the step
  // next_logits() just ran, [rows, layers, heads, source_len].
  virtual at::Tensor step_attention() { return {}; }
  // Streaming: greedy search and sampling tell it each token they append to hypothesis
  // `hypothesis` (input * num_return_sequences + k), prefix tokens and the final EOS included;
  // false ends that hypothesis there, as an EOS would (none is added). Beam search does not
  // call it: no beam's tokens are final before the search ends.
  virtual bool on_token(int64_t hypothesis, int64_t id) { return true; }
};

struct SearchHypothesis {
  std::vector<int64_t> ids;  // generated ids, decoder start excluded, final EOS included if any
  double score = 0.0;        // greedy: sum of log-probs; beam: HF's length-normalized score
  // With return_attention: [ids.size(), layers, heads, source_len], row t the weights of the
  // query that predicted ids[t]. It follows the hypothesis through every beam reorder.
  at::Tensor attention;
};

// Per input (in order), up to num_return_sequences hypotheses, best first. The model starts
// with one row per input; searches never leave finished inputs in the batch.
std::vector<std::vector<SearchHypothesis>> greedy_search(StepModel& model, int64_t batch_size,
                                                         const GenerationSettings& settings);
std::vector<std::vector<SearchHypothesis>> beam_search(StepModel& model, int64_t batch_size,
                                                       const GenerationSettings& settings);

inline std::vector<std::vector<SearchHypothesis>> search(StepModel& model, int64_t batch_size,
                                                         const GenerationSettings& settings) {
  return settings.num_beams > 1 ? beam_search(model, batch_size, settings)
                                : greedy_search(model, batch_size, settings);
}

}  // namespace ordo::search
