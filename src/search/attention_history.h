// The cross-attention of every hypothesis, kept per step and traced back through the beam
// reorders at the end, instead of copying each row's whole history at every step (which
// grows with the square of the length): O(length) per finished hypothesis.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace ordo::search {

class AttentionHistory {
 public:
  // The weights of the step just run, [rows, layers, heads, source_len]; `parents[r]` is the
  // row of the previous step that row r continues (empty for the first step).
  void add_step(const at::Tensor& weights) { steps_.push_back(weights); }
  // After the rows of the next step are chosen: row r of the next step continues row rows[r].
  void next_rows(std::vector<int64_t> rows) { parents_.push_back(std::move(rows)); }
  // [steps, layers, heads, source_len] of `row`, first step first. `row` is a row of the last
  // step added or, once next_rows() has followed it, of the rows chosen after it.
  at::Tensor trace(int64_t row) const {
    size_t k = steps_.size();
    if (parents_.size() == k) row = parents_[k - 1][static_cast<size_t>(row)];
    std::vector<at::Tensor> path(k);
    while (k-- > 0) {
      path[k] = steps_[k][row];
      if (k > 0) row = parents_[k - 1][static_cast<size_t>(row)];
    }
    return at::stack(path, 0);
  }
  bool empty() const { return steps_.empty(); }

 private:
  std::vector<at::Tensor> steps_;
  std::vector<std::vector<int64_t>> parents_;  // parents_[k]: rows of step k+1 -> rows of step k
};

}  // namespace ordo::search
