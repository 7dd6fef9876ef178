#pragma once
// 16-float lanes for ordo's own kernels (attention, log-softmax, top-k), which are compiled once
// per instruction set (AVX-512, AVX2, baseline; each kernel's .cpp picks one per process with
// pick_for_isa(), kernels/isa.h) from one body of always-inlined helpers. The arithmetic is written
// per lane, with every reduction in a fixed order (no sum the compiler may reassociate), so
// vectorizing it changes speed, not results: every row of every call runs the same operations.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/isa.h"

#define ORDO_ALWAYS_INLINE inline __attribute__((always_inline))
// The instruction sets a kernel body is compiled for: prefix a function with one of these.
#define ORDO_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define ORDO_TARGET_AVX2 __attribute__((target("avx2,fma")))

// The vector type only travels between always-inlined helpers: no call ABI is involved.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ordo::kernels::lanes {

// 16 floats, one AVX-512 register (two AVX2 or four SSE registers on smaller machines).
// GCC/Clang vector extensions: lane-wise IEEE arithmetic, never reassociated.
typedef float V16 __attribute__((vector_size(64)));

ORDO_ALWAYS_INLINE V16 load(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
ORDO_ALWAYS_INLINE void store(float* p, const V16& v) { std::memcpy(p, &v, sizeof v); }
ORDO_ALWAYS_INLINE V16 load_first(const float* p, int64_t n) {  // p[0..n), zeros after
  float lanes[16] = {};
  for (int64_t j = 0; j < n; ++j) lanes[j] = p[j];
  return load(lanes);
}

// A lane-wise comparison's result: all bits set in the lanes where it holds.
typedef int32_t I16 __attribute__((vector_size(64)));

// Whether the comparison holds in any lane.
ORDO_ALWAYS_INLINE bool any_lane(const I16& holds) {
  uint64_t words[8];
  std::memcpy(words, &holds, sizeof words);
  return ((words[0] | words[1]) | (words[2] | words[3])) | ((words[4] | words[5]) | (words[6] | words[7]));
}

// Whether any lane of v is greater than t (false for NaN lanes).
ORDO_ALWAYS_INLINE bool any_greater(const V16& v, float t) { return any_lane(v > (V16{} + t)); }

// Whether any lane of v is greater than t or NaN (not at most t).
ORDO_ALWAYS_INLINE bool any_above_or_nan(const V16& v, float t) { return any_lane(!(v <= (V16{} + t))); }

// The 16 lanes summed in a fixed tree.
ORDO_ALWAYS_INLINE float lane_sum(const V16& v) {
  float l[16];
  store(l, v);
  const float a0 = l[0] + l[8], a1 = l[1] + l[9], a2 = l[2] + l[10], a3 = l[3] + l[11];
  const float a4 = l[4] + l[12], a5 = l[5] + l[13], a6 = l[6] + l[14], a7 = l[7] + l[15];
  return ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7));
}

// The largest of the 16 lanes (a maximum does not depend on the order).
ORDO_ALWAYS_INLINE float lane_max(const V16& v) {
  float l[16];
  store(l, v);
  float top = l[0];
  for (int j = 1; j < 16; ++j) top = std::max(top, l[j]);
  return top;
}

// exp(x) for x <= 0 (Cephes' single-precision polynomial, ~1 ulp), 0 below -87.3 (where
// exp underflows to denormals) and for NaN. Branch-free so that 16 lanes run it as one vector.
ORDO_ALWAYS_INLINE float exp_nonpositive(float x) {
  const bool underflow = !(x >= -87.3f);
  x = std::max(x, -87.3f);
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  const int32_t exponent = (static_cast<int32_t>(n) + 127) << 23;
  return underflow ? 0.0f : y * __builtin_bit_cast(float, exponent);
}

// The instruction set each kernel's body is picked for (kernels/isa.h).
using kernels::best_isa;
using kernels::Isa;
using kernels::pick_for_isa;

}  // namespace ordo::kernels::lanes
