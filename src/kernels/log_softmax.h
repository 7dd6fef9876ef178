#pragma once
// log_softmax over the rows of a logits matrix, for the search's per-step scores. Beam search
// turns [hypotheses, vocabulary] logits into log-probabilities every step: 128 x 58,101 floats
// (30 MB) on the opus-mt workload at beam 4, 256,206 columns for NLLB. at::log_softmax reads
// them three times into a new 30-130 MB tensor (fresh pages from the kernel whenever the
// allocation is above malloc's mmap threshold), then the beam's score is added in another pass.
// Here the rows are turned into log-probabilities in place (three passes, no allocation), and
// greedy search, which needs one log-probability per row, does not write the rows at all.
//
// Each row alone, in a fixed order (the same for every row, batch and thread count):
//   top = max x_j;  sum = sum_j exp(x_j - top) in 16 lanes by column (kernels/lanes.h's exp,
//   ~1 ulp), the lanes by a fixed tree;  log_softmax_j = (x_j - top) - log(sum),
// the formula at::log_softmax evaluates; its exp and summation order differ (Sleef, its own
// vector blocking), so the results may differ from it in the last bit.
#include <ATen/ATen.h>

namespace ordo::kernels {

// x: [rows, n] float32, contiguous; each row replaced by its log_softmax.
void log_softmax_rows_(at::Tensor& x);

// [rows] float32: log_softmax(x[r])[ids[r]], the value log_softmax_rows_ would leave there,
// without writing x. ids: [rows] int64.
at::Tensor log_softmax_at(const at::Tensor& x, const at::Tensor& ids);

}  // namespace ordo::kernels
