// Per-row int8 quantization of the int8 GEMMs' inputs (kernels/quantize.h): one row's
// arithmetic, written once in scalar form and once with AVX-512, picked by pick_for_isa().
#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <immintrin.h>

#include "kernels/isa.h"
#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::kernels {
namespace {

// Symmetric per-row int8 quantization in two passes (absolute maximum, then scale and round):
// x[r] ~ x_q[r] * scales[r], x_q in [-127, 127]. One row's arithmetic, the same in every
// version below: peak = max |x_j| (a NaN is skipped), scale = max(peak, 1e-12) / 127,
// x_q = nearbyint(x_j * (1 / scale)) (round half to even, the current rounding mode).
float row_scale(float peak) { return std::max(peak, 1e-12f) / 127.0f; }

void quantize_row_scalar(const float* row, int64_t cols, int8_t* target, float* scale) {
  float peak = 0.0f;
  for (int64_t j = 0; j < cols; ++j) peak = std::max(peak, std::fabs(row[j]));
  *scale = row_scale(peak);
  const float inverse = 1.0f / *scale;
  for (int64_t j = 0; j < cols; ++j) target[j] = static_cast<int8_t>(std::nearbyint(row[j] * inverse));
}

// The same with AVX-512: at the machines' default (baseline x86-64) the scalar loops above cost a
// libm call per element, a cost comparable to the int8 products they feed on long inputs
// (docs/benchmarks.md). _mm512_max_ps(a, peak)
// returns peak when a is NaN, as std::max(peak, a) does; the conversion rounds by MXCSR, which
// is nearbyint's rounding; the values are within [-127, 127], so the narrowing saturates nothing.
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() as their unused merge source, which
// its -Wmaybe-uninitialized reports at every inlined call (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantize_row_avx512(const float* row, int64_t cols,
                                                                              int8_t* target, float* scale) {
  __m512 peaks = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= cols; j += 16) peaks = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(row + j)), peaks);
  float peak = _mm512_reduce_max_ps(peaks);  // exact: max is order-free on non-NaN values
  for (; j < cols; ++j) peak = std::max(peak, std::fabs(row[j]));
  *scale = row_scale(peak);
  const float inverse_scalar = 1.0f / *scale;
  const __m512 inverse = _mm512_set1_ps(inverse_scalar);
  for (j = 0; j + 16 <= cols; j += 16) {
    const __m512i rounded = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(row + j), inverse));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(target + j), _mm512_cvtsepi32_epi8(rounded));
  }
  for (; j < cols; ++j) target[j] = static_cast<int8_t>(std::nearbyint(row[j] * inverse_scalar));
}

// The weights' version (quantize_weight_rows): a division per value, clamped to [-127, 127].
__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantize_weight_row_avx512(const float* row, int64_t cols,
                                                                                     int8_t* target, float* scale) {
  __m512 peaks = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= cols; j += 16) peaks = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(row + j)), peaks);
  float peak = _mm512_reduce_max_ps(peaks);
  for (; j < cols; ++j) peak = std::max(peak, std::fabs(row[j]));
  const float s = row_scale(peak);
  *scale = s;
  const __m512 divisor = _mm512_set1_ps(s);
  const __m512i low = _mm512_set1_epi32(-127), high = _mm512_set1_epi32(127);
  for (j = 0; j + 16 <= cols; j += 16) {
    __m512i rounded = _mm512_cvtps_epi32(_mm512_div_ps(_mm512_loadu_ps(row + j), divisor));
    rounded = _mm512_min_epi32(_mm512_max_epi32(rounded, low), high);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(target + j), _mm512_cvtsepi32_epi8(rounded));
  }
  for (; j < cols; ++j) target[j] = static_cast<int8_t>(std::clamp(std::nearbyint(row[j] / s), -127.0f, 127.0f));
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void quantize_weight_row_scalar(const float* row, int64_t cols, int8_t* target, float* scale) {
  float peak = 0.0f;
  for (int64_t j = 0; j < cols; ++j) peak = std::max(peak, std::fabs(row[j]));
  const float s = row_scale(peak);
  *scale = s;
  for (int64_t j = 0; j < cols; ++j)
    target[j] = static_cast<int8_t>(std::clamp(std::nearbyint(row[j] / s), -127.0f, 127.0f));
}

using QuantizeRow = void (*)(const float*, int64_t, int8_t*, float*);
// No AVX2 body: the AVX-512 one or the scalar one.
QuantizeRow pick_quantize_row() {
  return pick_for_isa<QuantizeRow>(quantize_row_avx512, quantize_row_scalar, quantize_row_scalar);
}

QuantizeRow pick_quantize_weight_row() {
  return pick_for_isa<QuantizeRow>(quantize_weight_row_avx512, quantize_weight_row_scalar, quantize_weight_row_scalar);
}

}  // namespace

void quantize_weight_rows(const float* w, int64_t rows, int64_t cols, int8_t* q, float* scales) {
  static const QuantizeRow quantize_row = pick_quantize_weight_row();
  for (int64_t r = 0; r < rows; ++r) quantize_row(w + r * cols, cols, q + r * cols, scales + r);
}

at::Tensor quantize_rows(const at::Tensor& x, at::Tensor& scales) {
  static const QuantizeRow quantize_row = pick_quantize_row();
  if (x.dim() != 2 || x.scalar_type() != at::kFloat || !x.is_contiguous())
    throw Error("quantize_rows: the input must be a contiguous 2-d float32 tensor");
  const int64_t rows = x.size(0), cols = x.size(1);
  if (!scales.defined() || scales.scalar_type() != at::kFloat || !scales.is_contiguous() || scales.numel() != rows)
    throw Error("quantize_rows: scales must be a contiguous float32 tensor of " + std::to_string(rows) + " elements");
  at::Tensor q = at::empty({rows, cols}, at::kChar);
  const float* in = x.data_ptr<float>();
  int8_t* out = q.data_ptr<int8_t>();
  float* scale = scales.data_ptr<float>();
  parallel_for(0, rows, grain_for(2 * cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) quantize_row(in + r * cols, cols, out + r * cols, scale + r);
  });
  return q;
}

}  // namespace ordo::kernels
