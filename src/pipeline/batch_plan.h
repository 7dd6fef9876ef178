#pragma once
// How one call's sentences become batches: sorted by length so that sentences of similar length
// share a batch (less padding), cut into runs of at most batch_size sentences and, when set,
// batch_tokens padded source tokens; results go back in input order through `order`.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace ordo::pipeline {

struct BatchPlan {
  std::vector<size_t> order;                       // input indices, shortest source first
  std::vector<std::pair<size_t, size_t>> batches;  // [begin, end) ranges of `order`
};

// batch_size >= 1; batch_tokens 0 = no cap (a sentence longer than the cap goes alone).
// Throws ordo::Error for a batch size below 1 or negative batch tokens.
BatchPlan plan_batches(const std::vector<std::vector<int64_t>>& sources, int batch_size, int batch_tokens);

// Right-pads `batch` with `pad` into ids and attention-mask tensors [rows, longest].
std::pair<at::Tensor, at::Tensor> pad_batch(const std::vector<const std::vector<int64_t>*>& batch, int64_t pad);

}  // namespace ordo::pipeline
