// The start of a beam-search step, the same in plain and constrained beam search: the next
// logits (the step's cross-attention recorded when asked), the pad token banned where the
// family never pads a beam (Marian), log-probabilities computed in place, and Hugging Face's
// logits processors applied, in generate()'s order.
#pragma once

#include <limits>

#include <ATen/ATen.h>

#include "kernels/log_softmax.h"
#include "search/attention_history.h"
#include "search/generation_settings.h"
#include "search/logits_processors.h"
#include "search/search.h"

namespace ordo::search {

// sequences: [rows, cur_len]; returns [rows, vocab] float32 log-probabilities (the logits are
// this step's own, so they are overwritten: kernels/log_softmax.h saves two full passes).
inline at::Tensor beam_step_log_probs(StepModel& model, const at::Tensor& sequences, const GenerationSettings& s,
                                      const LogitsProcessorList& processors, AttentionHistory& attention) {
  at::Tensor logits = model.next_logits(sequences.narrow(1, sequences.size(1) - 1, 1));
  if (s.return_attention) attention.add_step(model.step_attention());
  if (s.beam_never_pad) logits.select(1, s.pad_token_id).fill_(-std::numeric_limits<float>::infinity());
  at::Tensor scores = logits.to(at::kFloat).contiguous();
  kernels::log_softmax_rows_(scores);
  processors.apply(sequences, scores);
  return scores;
}

}  // namespace ordo::search
