#include "pipeline/batch_plan.h"

#include <algorithm>
#include <numeric>

#include "ordo/error.h"

namespace ordo::pipeline {

BatchPlan plan_batches(const std::vector<std::vector<int64_t>>& sources, int batch_size, int batch_tokens) {
  if (batch_size < 1) throw Error("invalid decoding option: batch size must be at least 1");
  if (batch_tokens < 0) throw Error("invalid decoding option: batch tokens must not be negative");
  BatchPlan plan;
  std::vector<size_t>& order = plan.order;
  order.resize(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sources[a].size() < sources[b].size(); });
  for (size_t start = 0; start < order.size();) {
    size_t end = start + 1;
    while (end < order.size() && end - start < static_cast<size_t>(batch_size) &&
           (batch_tokens == 0 || (end - start + 1) * sources[order[end]].size() <= static_cast<size_t>(batch_tokens)))
      ++end;
    plan.batches.emplace_back(start, end);
    start = end;
  }
  return plan;
}

std::pair<at::Tensor, at::Tensor> pad_batch(const std::vector<const std::vector<int64_t>*>& batch, int64_t pad) {
  size_t longest = 1;
  for (const auto* ids : batch) longest = std::max(longest, ids->size());
  at::Tensor ids = at::full({static_cast<int64_t>(batch.size()), static_cast<int64_t>(longest)}, pad, at::kLong);
  at::Tensor mask = at::zeros_like(ids);
  for (size_t row = 0; row < batch.size(); ++row) {
    const auto& source = *batch[row];
    if (source.empty()) continue;
    const int64_t n = static_cast<int64_t>(source.size());
    ids[row].narrow(0, 0, n).copy_(at::tensor(source, at::kLong));
    mask[row].narrow(0, 0, n).fill_(1);
  }
  return {ids, mask};
}

}  // namespace ordo::pipeline
