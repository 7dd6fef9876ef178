#include "kernels/screen_bounds.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/isa.h"
#include "kernels/lanes.h"

namespace ordo::kernels {
namespace {

constexpr float kU8 = 8 * 0x1p-24f, kOutward = 0x1p-20f;

bool bounds_scalar(const float* a, int64_t n, const ScreenColumns& c, const ScreenRow& r, float* values, char* wanted) {
  float low = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    const float e = 1.01f * (std::min(r.l1 * c.x_holder[j], r.x_norm * c.x_cs[j]) +
                             std::min(r.row_scale * c.q_holder[j], r.d_norm * c.q_cs[j]) + r.g_l1 * c.sum_rounding[j] +
                             c.fixed[j] + kU8 * std::fabs(a[j])) +
                    1e-30f;
    const float up = a[j] + e, down = a[j] - e;
    values[j] = up + std::fabs(up) * kOutward;
    low = std::max(low, down - std::fabs(down) * kOutward);
  }
  if (!std::isfinite(low)) return false;
  for (int64_t j = 0; j < n; ++j)
    if (values[j] >= low) wanted[j / 16] = 1;
  return true;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC bug 105593 (kernels/quantize.cpp)
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
ORDO_TARGET_AVX512 bool bounds_avx512(const float* a, int64_t n, const ScreenColumns& c, const ScreenRow& r,
                                      float* values, char* wanted) {
  const __m512 l1 = _mm512_set1_ps(r.l1), x_norm = _mm512_set1_ps(r.x_norm), row_scale = _mm512_set1_ps(r.row_scale),
               d_norm = _mm512_set1_ps(r.d_norm), g_l1 = _mm512_set1_ps(r.g_l1), u8 = _mm512_set1_ps(kU8),
               widen = _mm512_set1_ps(1.01f), tiny = _mm512_set1_ps(1e-30f), outward = _mm512_set1_ps(kOutward);
  __m512 low = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mask = n - j >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - j)) - 1);
    const __m512 av = _mm512_maskz_loadu_ps(mask, a + j);
    const __m512 x_e = _mm512_min_ps(_mm512_mul_ps(l1, _mm512_maskz_loadu_ps(mask, c.x_holder + j)),
                                     _mm512_mul_ps(x_norm, _mm512_maskz_loadu_ps(mask, c.x_cs + j)));
    const __m512 q_d = _mm512_min_ps(_mm512_mul_ps(row_scale, _mm512_maskz_loadu_ps(mask, c.q_holder + j)),
                                     _mm512_mul_ps(d_norm, _mm512_maskz_loadu_ps(mask, c.q_cs + j)));
    __m512 sum = _mm512_add_ps(x_e, q_d);
    sum = _mm512_add_ps(sum, _mm512_mul_ps(g_l1, _mm512_maskz_loadu_ps(mask, c.sum_rounding + j)));
    sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(mask, c.fixed + j));
    sum = _mm512_add_ps(sum, _mm512_mul_ps(u8, _mm512_abs_ps(av)));
    const __m512 e = _mm512_add_ps(_mm512_mul_ps(widen, sum), tiny);
    const __m512 up = _mm512_add_ps(av, e), down = _mm512_sub_ps(av, e);
    _mm512_mask_storeu_ps(values + j, mask, _mm512_add_ps(up, _mm512_mul_ps(_mm512_abs_ps(up), outward)));
    const __m512 lowered = _mm512_sub_ps(down, _mm512_mul_ps(_mm512_abs_ps(down), outward));
    low = _mm512_mask_max_ps(low, mask, lowered, low);  // a NaN lowered keeps low (std::max's order)
  }
  const float largest = _mm512_reduce_max_ps(low);
  if (!std::isfinite(largest)) return false;
  const __m512 bar = _mm512_set1_ps(largest);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mask = n - j >= 16 ? 0xffff : static_cast<__mmask16>((1u << (n - j)) - 1);
    if (_mm512_mask_cmp_ps_mask(mask, _mm512_maskz_loadu_ps(mask, values + j), bar, _CMP_GE_OQ)) wanted[j / 16] = 1;
  }
  return true;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using Bounds = bool (*)(const float*, int64_t, const ScreenColumns&, const ScreenRow&, float*, char*);

}  // namespace

bool screen_bounds(const float* a, int64_t n, const ScreenColumns& columns, const ScreenRow& row, float* values,
                   char* wanted) {
  static const Bounds bounds = pick_for_isa<Bounds>(bounds_avx512, bounds_scalar, bounds_scalar);
  return bounds(a, n, columns, row, values, wanted);
}

}  // namespace ordo::kernels
