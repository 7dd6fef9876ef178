// The training-time forward pass: the engine's own layers (nn/, models/), with dropout around
// each sub-layer as in the original Transformer. Dropout exists only here, so the inference
// path in src/ never carries training-only code.
#pragma once

#include <ATen/ATen.h>

#include "models/seq2seq_model.h"
#include "train/corpus.h"

namespace ordo::train {

struct TrainingOptions {
  double dropout = 0.1;
  double label_smoothing = 0.1;
};

// Summed label-smoothed cross-entropy over the batch's target tokens (pad ignored).
// `training` false: no dropout, plain evaluation.
at::Tensor batch_loss(models::Seq2SeqModel& model, const Batch& batch, const TrainingOptions& options, bool training);

// Random initialisation (Xavier for projections, N(0, d^-1/2) for the scaled embedding, unit
// layer norms, zero biases), from `seed`.
void initialise(models::Seq2SeqModel& model, uint64_t seed);

}  // namespace ordo::train
