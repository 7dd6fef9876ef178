// Greedy and beam search over a decoder seen only through StepModel. Both reproduce Hugging
// Face generate() (transformers 4.31) for the same GenerationSettings.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/ATen.h>

#include "search/generation_settings.h"

namespace ordo::search {

// Logits of which only some are exact (StepModel::next_logits_bounded): enough for a search that
// wants each row's largest and no log-probabilities.
struct BoundedLogits {
  at::Tensor values;  // [rows, vocab]: next_logits()'s own value where `exact`, an upper bound of it elsewhere
  at::Tensor exact;   // bool [rows, vocab]; undefined: every value is exact
  // This step's next_logits() in full, for when a row's largest lands on a bound.
  std::function<at::Tensor()> exact_logits;
};

// What a search needs from a model: "scores for the next token of these hypotheses" and
// "keep only these hypotheses, in this order".
class StepModel {
 public:
  virtual ~StepModel() = default;
  // tokens: [rows, 1] int64, the newest token of each hypothesis -> logits [rows, vocab].
  virtual at::Tensor next_logits(const at::Tensor& tokens) = 0;
  // The same step as next_logits(), for greedy search without scores (GenerationSettings::
  // need_scores false): a model may compute exactly only the logits that can be a row's
  // largest. By default all of them.
  virtual BoundedLogits next_logits_bounded(const at::Tensor& tokens) { return {next_logits(tokens), {}, {}}; }
  // Keeps hypotheses `rows` (int64 indices into the current rows), in that order.
  virtual void select(const at::Tensor& rows) = 0;
  // With GenerationSettings::return_attention: the cross-attention weights of the step
  // next_logits() just ran, [rows, layers, heads, source_len].
  virtual at::Tensor step_attention() { return {}; }
  // Streaming: greedy search and sampling tell it each token they append to hypothesis
  // `hypothesis` (input * num_return_sequences + k), prefix tokens and the final EOS included,
  // with the log-probability it adds to the score (0 for a prefix token); false ends that
  // hypothesis there, as an EOS would (none is added). Beam search does not call it: no
  // beam's tokens are final before the search ends.
  virtual bool on_token(int64_t hypothesis, int64_t id, float log_prob) { return true; }
};

// A StepModel that passes every call to the one it wraps: the base of the wrappers that add one
// thing to a step (a cancellation check, streaming, a probability kept), so that a call added
// to StepModel reaches the model through all of them. A wrapper that overrides next_logits()
// overrides next_logits_bounded() too, or the bounded path passes it by.
class ForwardingStep : public StepModel {
 public:
  explicit ForwardingStep(StepModel& inner) : inner_(inner) {}
  at::Tensor next_logits(const at::Tensor& tokens) override { return inner_.next_logits(tokens); }
  BoundedLogits next_logits_bounded(const at::Tensor& tokens) override { return inner_.next_logits_bounded(tokens); }
  void select(const at::Tensor& rows) override { inner_.select(rows); }
  at::Tensor step_attention() override { return inner_.step_attention(); }
  bool on_token(int64_t hypothesis, int64_t id, float log_prob) override {
    return inner_.on_token(hypothesis, id, log_prob);
  }

 protected:
  StepModel& inner_;
};

struct SearchHypothesis {
  std::vector<int64_t> ids;  // generated ids, decoder start excluded, final EOS included if any
  double score = 0.0;        // greedy: sum of log-probs; beam: HF's length-normalized score
  // With return_attention: [ids.size(), layers, heads, source_len], row t the weights of the
  // query that predicted ids[t]. It follows the hypothesis through every beam reorder.
  at::Tensor attention;
};

// Per input, the target ids its hypotheses start with after the decoder start (a target
// prefix; empty = none, and an empty list = none for every input). Each is forced one token
// per step, as if it were generate()'s decoder_input_ids: the logits processors see it, it
// stays in SearchHypothesis::ids and adds nothing to the score. Lengths in the settings count
// it (the pipeline widens max_length and min_new_tokens by it).
using Prefixes = std::vector<std::vector<int64_t>>;

// Per input (in order), up to num_return_sequences hypotheses, best first. The model starts
// with one row per input; searches never leave finished inputs in the batch.
std::vector<std::vector<SearchHypothesis>> greedy_search(StepModel& model, int64_t batch_size,
                                                         const GenerationSettings& settings,
                                                         const Prefixes& prefixes = {});
std::vector<std::vector<SearchHypothesis>> beam_search(StepModel& model, int64_t batch_size,
                                                       const GenerationSettings& settings,
                                                       const Prefixes& prefixes = {});
// The first step of DecodeOptions::return_alternatives: after the decoder start and each
// input's prefix (all of one length), its settings.alternatives likeliest next tokens by the
// model's own log-softmax (no logits processor), the end and padding tokens excluded, best
// first. Each hypothesis is the prefix and one of them, scored with its log-probability; the
// pipeline then continues each greedily with it as the prefix.
std::vector<std::vector<SearchHypothesis>> alternatives_search(StepModel& model, int64_t batch_size,
                                                               const GenerationSettings& settings,
                                                               const Prefixes& prefixes = {});

// The searches, chosen from the settings in this one place (search()).
enum class SearchKind { kGreedy, kSample, kBeam, kConstrainedBeam, kAlternatives };
SearchKind search_kind(const GenerationSettings& settings);
std::vector<std::vector<SearchHypothesis>> search(StepModel& model, int64_t batch_size,
                                                  const GenerationSettings& settings, const Prefixes& prefixes = {});

// The prefix token input `input` must take at step `step` (0 = the first after the decoder
// start), or -1 when its prefix is over.
inline int64_t prefix_token(const Prefixes& prefixes, int64_t input, int64_t step) {
  if (prefixes.empty()) return -1;
  const std::vector<int64_t>& p = prefixes[static_cast<size_t>(input)];
  return step < static_cast<int64_t>(p.size()) ? p[static_cast<size_t>(step)] : -1;
}

}  // namespace ordo::search
