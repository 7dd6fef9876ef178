// Greedy search and sampling (HF greedy_search / sample): one row per hypothesis, the next
// token either the argmax or a draw from the warped distribution.
#include <limits>
#include <numeric>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>

#include "kernels/log_softmax.h"
#include "kernels/top_k.h"
#include "search/attention_history.h"
#include "search/logits_processors.h"
#include "search/search.h"

namespace ordo::search {
namespace {

// HF's TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, in that order.
at::Tensor warp(at::Tensor scores, const GenerationSettings& s) {
  const float lowest = -std::numeric_limits<float>::infinity();
  if (s.temperature != 1.0) scores = scores / s.temperature;
  if (s.top_k > 0 && s.top_k < scores.size(-1)) {
    const at::Tensor kth = std::get<0>(at::topk(scores, s.top_k, -1)).narrow(-1, s.top_k - 1, 1);
    scores = scores.masked_fill(scores < kth, lowest);
  }
  if (s.top_p < 1.0) {
    const auto [sorted, order] = at::sort(scores, -1, /*descending=*/false);
    const at::Tensor cumulative = at::softmax(sorted, -1).cumsum(-1);
    at::Tensor remove = cumulative <= (1 - s.top_p);
    remove.narrow(-1, remove.size(-1) - 1, 1).fill_(false);  // keep at least one token
    scores = scores.masked_fill(remove.scatter(-1, order, remove), lowest);
  }
  return scores;
}

}  // namespace

std::vector<std::vector<SearchHypothesis>> greedy_search(StepModel& model, int64_t batch_size,
                                                         const GenerationSettings& s, const Prefixes& prefixes) {
  const LogitsProcessorList processors(s);
  // Sampling draws num_return_sequences hypotheses per input (HF expands the batch likewise).
  const int64_t per_input = s.do_sample ? s.num_return_sequences : 1;
  std::vector<std::vector<SearchHypothesis>> results(batch_size, std::vector<SearchHypothesis>(per_input));
  if (per_input > 1) model.select(at::arange(batch_size, at::kLong).repeat_interleave(per_input));
  // One generator per hypothesis, seeded with seed + k (k: its number among its input's
  // num_return_sequences), drawing for its own row only: a sentence gets the same samples
  // alone or in any batch. (One generator for the batch handed each row the draws the rows
  // before it left, so a sample depended on its companions.)
  std::vector<at::Generator> generators;
  if (s.do_sample)
    for (int64_t h = 0; h < batch_size * per_input; ++h)
      generators.push_back(at::make_generator<at::CPUGeneratorImpl>(s.seed + static_cast<uint64_t>(h % per_input)));
  // Rows still decoding and the hypothesis each belongs to (input * per_input + k). A finished
  // row is dropped from the model's batch at once (Hugging Face keeps padding it; the
  // survivors' results are the same).
  std::vector<int64_t> owner(batch_size * per_input);
  std::iota(owner.begin(), owner.end(), 0);
  at::Tensor sequences = at::full({batch_size * per_input, 1}, s.decoder_start_token_id, at::kLong);
  AttentionHistory attention;  // return_attention

  // Greedy without scores takes bounded logits (StepModel::next_logits_bounded) when the
  // processors keep an upper bound one: a row's pick is then final if it is an exact logit.
  const bool bounded = !s.do_sample && !s.need_scores && processors.order_preserving();

  while (!owner.empty() && sequences.size(1) < s.max_length) {
    const at::Tensor last = sequences.narrow(1, sequences.size(1) - 1, 1);
    BoundedLogits step = bounded ? model.next_logits_bounded(last) : BoundedLogits{model.next_logits(last), {}, {}};
    at::Tensor scores = std::move(step.values);
    // A log-softmax among the processors may round scores a few ulps apart into a tie: then a
    // pick also needs a lead over every other score well beyond such rounding (below).
    const at::Tensor largest = step.exact.defined() && processors.shifts_rows() ? scores.abs().amax(-1) : at::Tensor();
    if (s.return_attention) attention.add_step(model.step_attention());
    processors.apply(sequences, scores);
    // A row still in its target prefix takes the prefix's token (no draw, no score).
    std::vector<int64_t> forced(owner.size(), -1);
    for (size_t row = 0; row < owner.size(); ++row)
      forced[row] = prefix_token(prefixes, owner[row] / per_input, sequences.size(1) - 1);
    at::Tensor picked;  // the argmax, when already taken over the bounded logits
    if (step.exact.defined()) {
      picked = kernels::argmax_rows(scores);
      const at::Tensor on_exact = step.exact.gather(1, picked.unsqueeze(1)).squeeze(1);
      bool all_exact = true;
      for (size_t row = 0; row < owner.size(); ++row)
        all_exact = all_exact && (forced[row] >= 0 || on_exact[static_cast<int64_t>(row)].item<bool>());
      if (all_exact && largest.defined() && scores.size(1) > 1) {
        const at::Tensor top = std::get<0>(scores.topk(2, -1));
        const at::Tensor lead = top.select(1, 0) - top.select(1, 1);
        const at::Tensor needed = (top.select(1, 0).abs() + largest + 64) * 0x1p-16;
        for (size_t row = 0; row < owner.size(); ++row)
          all_exact = all_exact && (forced[row] >= 0 || lead[static_cast<int64_t>(row)].item<float>() >=
                                                            needed[static_cast<int64_t>(row)].item<float>());
      }
      if (!all_exact) {  // a bound is the largest somewhere: this step in full
        scores = step.exact_logits();
        processors.apply(sequences, scores);
        picked = at::Tensor();
      }
    }
    at::Tensor next;
    if (s.do_sample) {
      const at::Tensor probs = at::softmax(warp(scores, s), -1);
      next = at::empty({static_cast<int64_t>(owner.size())}, at::kLong);
      int64_t* drawn = next.data_ptr<int64_t>();
      for (size_t row = 0; row < owner.size(); ++row)
        drawn[row] =
            forced[row] >= 0
                ? forced[row]
                : at::multinomial(probs[static_cast<int64_t>(row)], 1, false, generators[owner[row]]).item<int64_t>();
    } else {
      next = picked.defined() ? picked : kernels::argmax_rows(scores);
      int64_t* chosen = next.data_ptr<int64_t>();
      for (size_t row = 0; row < owner.size(); ++row)
        if (forced[row] >= 0) chosen[row] = forced[row];
    }
    const at::Tensor log_probs = s.need_scores ? kernels::log_softmax_at(scores.to(at::kFloat).contiguous(), next)
                                               : at::zeros({next.size(0)}, at::kFloat);
    sequences = at::cat({sequences, next.unsqueeze(1)}, 1);

    const int64_t* next_ids = next.data_ptr<int64_t>();
    const float* next_log_probs = log_probs.data_ptr<float>();
    std::vector<int64_t> keep;
    std::vector<int64_t> still_owner;
    for (size_t row = 0; row < owner.size(); ++row) {
      SearchHypothesis& hyp = results[owner[row] / per_input][owner[row] % per_input];
      hyp.ids.push_back(next_ids[row]);
      const float log_prob = forced[row] < 0 ? next_log_probs[row] : 0.0f;
      hyp.score += log_prob;
      const bool go_on = model.on_token(owner[row], next_ids[row], log_prob);  // streaming; false: stop here
      const bool ends = next_ids[row] == s.eos_token_id || !go_on;
      if (s.return_attention && ends) hyp.attention = attention.trace(static_cast<int64_t>(row));
      if (!ends) {
        keep.push_back(static_cast<int64_t>(row));
        still_owner.push_back(owner[row]);
      }
    }
    if (keep.size() != owner.size() && !keep.empty()) {
      const at::Tensor rows = at::tensor(keep, at::kLong);
      model.select(rows);
      sequences = sequences.index_select(0, rows);
    }
    if (s.return_attention && !keep.empty()) attention.next_rows(keep);
    owner = std::move(still_owner);
  }
  // Out of length: the rows still decoding.
  if (s.return_attention)
    for (size_t row = 0; row < owner.size(); ++row)
      results[owner[row] / per_input][owner[row] % per_input].attention = attention.trace(static_cast<int64_t>(row));
  return results;
}

}  // namespace ordo::search
