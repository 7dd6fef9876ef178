#include "kernels/top_k.h"

#include <limits>
#include <string>

#include "kernels/lanes.h"
#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::kernels {
namespace {

using namespace kernels::lanes;

// Offers v (column `column`) to the k-slot list: inserted after every entry >= v (ties keep the
// lower column first); once the list is full, only a v greater than its last entry (never NaN).
ORDO_ALWAYS_INLINE void offer(float v, int64_t column, int64_t k, int64_t& filled, float* values, int64_t* indices) {
  if (filled == k && !(v > values[k - 1])) return;
  int64_t pos = filled < k ? filled++ : k - 1;
  while (pos > 0 && values[pos - 1] < v) {
    values[pos] = values[pos - 1];
    indices[pos] = indices[pos - 1];
    --pos;
  }
  values[pos] = v;
  indices[pos] = column;
}

// Rows [begin, end): the entries offered in column order, 16 at a time once the list is full,
// a block of 16 none of which beats the last entry passed over with one comparison. Each entry
// is the same float (row[j] or row[j] + offset) whichever way it is read.
template <bool kOffsets>
ORDO_ALWAYS_INLINE void rank_rows(const float* data, int64_t n, int64_t segment, const float* offsets, int64_t k,
                                  float* all_values, int64_t* all_indices, int64_t begin, int64_t end) {
  const int64_t segments = n / segment;
  for (int64_t r = begin; r < end; ++r) {
    float* values = all_values + r * k;
    int64_t* indices = all_indices + r * k;
    int64_t filled = 0;
    for (int64_t i = 0; i < segments; ++i) {
      const float* row = data + r * n + i * segment;
      const float offset = kOffsets ? offsets[r * segments + i] : 0.0f;
      const auto entry = [&](int64_t j) { return kOffsets ? row[j] + offset : row[j]; };
      int64_t j = 0;
      for (; j < segment && filled < k; ++j) offer(entry(j), i * segment + j, k, filled, values, indices);
      for (; j + 16 <= segment; j += 16) {
        V16 block = load(row + j);
        if (kOffsets) block += offset;
        if (!any_greater(block, values[k - 1])) continue;
        float lane[16];
        store(lane, block);
        for (int t = 0; t < 16; ++t) offer(lane[t], i * segment + j + t, k, filled, values, indices);
      }
      for (; j < segment; ++j) offer(entry(j), i * segment + j, k, filled, values, indices);
    }
  }
}

using Kernel = void (*)(const float*, int64_t, int64_t, const float*, int64_t, float*, int64_t*, int64_t, int64_t);

#define ORDO_TOP_K_KERNELS(suffix, target)                                                                  \
  template <bool kOffsets>                                                                                  \
  target void rank_##suffix(const float* data, int64_t n, int64_t segment, const float* offsets, int64_t k, \
                            float* values, int64_t* indices, int64_t begin, int64_t end) {                  \
    rank_rows<kOffsets>(data, n, segment, offsets, k, values, indices, begin, end);                         \
  }
ORDO_TOP_K_KERNELS(avx512, ORDO_TARGET_AVX512)
ORDO_TOP_K_KERNELS(avx2, ORDO_TARGET_AVX2)
ORDO_TOP_K_KERNELS(baseline, )
#undef ORDO_TOP_K_KERNELS

Kernel pick_kernel(bool with_offsets) {
  if (with_offsets) return pick_for_isa<Kernel>(rank_avx512<true>, rank_avx2<true>, rank_baseline<true>);
  return pick_for_isa<Kernel>(rank_avx512<false>, rank_avx2<false>, rank_baseline<false>);
}

// Rows [begin, end): the running largest entry, replaced only by a greater one (the first of
// equals stays) or by a NaN, which ends the row; 16 entries that hold neither pass with one
// comparison.
ORDO_ALWAYS_INLINE void argmax_of_rows(const float* data, int64_t n, int64_t* out, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const float* row = data + r * n;
    float best = row[0];
    int64_t at = 0;
    const auto offer = [&](int64_t j) {
      if (row[j] != row[j]) return true;  // NaN: the row's answer
      if (row[j] > best) best = row[j], at = j;
      return false;
    };
    bool nan = best != best;
    int64_t j = 1;
    for (; !nan && j + 16 <= n; j += 16)
      if (any_above_or_nan(load(row + j), best))
        for (int t = 0; t < 16 && !nan; ++t)
          if ((nan = offer(j + t))) at = j + t;
    for (; !nan && j < n; ++j)
      if ((nan = offer(j))) at = j;
    out[r] = at;
  }
}

using ArgmaxKernel = void (*)(const float*, int64_t, int64_t*, int64_t, int64_t);

#define ORDO_ARGMAX_KERNELS(suffix, target)                                                             \
  target void argmax_##suffix(const float* data, int64_t n, int64_t* out, int64_t begin, int64_t end) { \
    argmax_of_rows(data, n, out, begin, end);                                                           \
  }
ORDO_ARGMAX_KERNELS(avx512, ORDO_TARGET_AVX512)
ORDO_ARGMAX_KERNELS(avx2, ORDO_TARGET_AVX2)
ORDO_ARGMAX_KERNELS(baseline, )
#undef ORDO_ARGMAX_KERNELS

}  // namespace

at::Tensor argmax_rows(const at::Tensor& scores) {
  const at::Tensor input = scores.to(at::kFloat).contiguous();
  if (input.dim() != 2 || input.size(1) < 1) throw Error("argmax_rows: expects a [rows, n] matrix with n >= 1");
  const int64_t rows = input.size(0), n = input.size(1);
  at::Tensor out = at::empty({rows}, at::kLong);
  const float* data = input.data_ptr<float>();
  int64_t* at = out.data_ptr<int64_t>();
  static const ArgmaxKernel kernel = pick_for_isa<ArgmaxKernel>(argmax_avx512, argmax_avx2, argmax_baseline);
  kernels::parallel_for(0, rows, kernels::grain_for(n),
                        [&](int64_t begin, int64_t end) { kernel(data, n, at, begin, end); });
  return out;
}

TopK top_k_rows(const at::Tensor& scores, int64_t k, const float* offsets, int64_t segment) {
  const at::Tensor input = scores.to(at::kFloat).contiguous();
  const int64_t rows = input.size(0), n = input.size(1);
  if (k < 1 || k > n) throw Error("top_k_rows: k = " + std::to_string(k) + " of " + std::to_string(n) + " columns");
  if (!offsets || segment <= 0) segment = n;
  if (n % segment != 0)
    throw Error("top_k_rows: " + std::to_string(n) + " columns are not whole segments of " + std::to_string(segment));
  TopK top;
  top.values.assign(static_cast<size_t>(rows * k), -std::numeric_limits<float>::infinity());
  top.indices.assign(static_cast<size_t>(rows * k), -1);
  const float* data = input.data_ptr<float>();
  static const Kernel with_offsets = pick_kernel(true), without = pick_kernel(false);
  const Kernel kernel = offsets ? with_offsets : without;
  kernels::parallel_for(0, rows, kernels::grain_for(n), [&](int64_t begin, int64_t end) {
    kernel(data, n, segment, offsets, k, top.values.data(), top.indices.data(), begin, end);
  });
  return top;
}

}  // namespace ordo::kernels
