#include "search/top_k.h"

#include <limits>
#include <string>

#include "nn/parallel.h"
#include "ordo/error.h"

namespace ordo::search {

TopK top_k_rows(const at::Tensor& scores, int64_t k, const float* offsets, int64_t segment) {
  const at::Tensor input = scores.to(at::kFloat).contiguous();
  const int64_t rows = input.size(0), n = input.size(1);
  if (!offsets || segment <= 0) segment = n;
  if (n % segment != 0) throw Error("top_k_rows: " + std::to_string(n) + " columns are not whole segments of " +
                                    std::to_string(segment));
  const int64_t segments = n / segment;
  TopK top;
  top.values.assign(static_cast<size_t>(rows * k), -std::numeric_limits<float>::infinity());
  top.indices.assign(static_cast<size_t>(rows * k), -1);
  const float* data = input.data_ptr<float>();
  nn::parallel_for(0, rows, nn::grain_for(n), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float* values = top.values.data() + r * k;
      int64_t* indices = top.indices.data() + r * k;
      int64_t filled = 0;
      for (int64_t i = 0; i < segments; ++i) {
        const float* row = data + r * n + i * segment;
        const float offset = offsets ? offsets[r * segments + i] : 0.0f;
        for (int64_t j = 0; j < segment; ++j) {
          const float v = offsets ? row[j] + offset : row[j];
          if (filled == k && !(v > values[k - 1])) continue;  // also skips NaN
          // Insert after every entry >= v (ties keep the lower column first).
          int64_t pos = filled < k ? filled++ : k - 1;
          while (pos > 0 && values[pos - 1] < v) {
            values[pos] = values[pos - 1];
            indices[pos] = indices[pos - 1];
            --pos;
          }
          values[pos] = v;
          indices[pos] = i * segment + j;
        }
      }
    }
  });
  return top;
}

}  // namespace ordo::search
