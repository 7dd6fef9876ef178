#include "nn/attention_kernel.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <ATen/Parallel.h>

#include "ordo/error.h"

// Everything the kernel calls is inlined into one body that is compiled once per instruction
// set (AVX-512, AVX2, baseline) and picked once per process: every row of every call runs
// the same instructions. The arithmetic is written per lane (no reduction the compiler may
// reassociate), so vectorizing it changes speed, not results.
#define ORDO_ALWAYS_INLINE inline __attribute__((always_inline))

// The vector type only travels between always-inlined helpers: no call ABI is involved.
#pragma GCC diagnostic ignored "-Wpsabi"


namespace ordo::nn {
namespace {

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

// The 16 lanes summed in a fixed tree.
ORDO_ALWAYS_INLINE float lane_sum(const V16& v) {
  float l[16];
  store(l, v);
  const float a0 = l[0] + l[8], a1 = l[1] + l[9], a2 = l[2] + l[10], a3 = l[3] + l[11];
  const float a4 = l[4] + l[12], a5 = l[5] + l[13], a6 = l[6] + l[14], a7 = l[7] + l[15];
  return ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7));
}

// a . b over n elements (the head dimension: the same for every call of a model). Blocks of
// 64 go to four accumulators; the blocks of 16 left go to the first ones in turn and a final
// partial block to the last; then one fixed sum.
ORDO_ALWAYS_INLINE float dot(const float* a, const float* b, int64_t n) {
  V16 acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
  int64_t d = 0;
  for (; d + 64 <= n; d += 64) {
    acc0 += load(a + d) * load(b + d);
    acc1 += load(a + d + 16) * load(b + d + 16);
    acc2 += load(a + d + 32) * load(b + d + 32);
    acc3 += load(a + d + 48) * load(b + d + 48);
  }
  if (d + 16 <= n) {
    acc0 += load(a + d) * load(b + d);
    d += 16;
  }
  if (d + 16 <= n) {
    acc1 += load(a + d) * load(b + d);
    d += 16;
  }
  if (d + 16 <= n) {
    acc2 += load(a + d) * load(b + d);
    d += 16;
  }
  if (d < n) acc3 += load_first(a + d, n - d) * load_first(b + d, n - d);
  return lane_sum((acc0 + acc1) + (acc2 + acc3));
}

// exp(x) for x <= 0 (Cephes' single-precision polynomial, ~1 ulp), 0 below -87.3 (where
// exp underflows to denormals). Branch-free so that 16 lanes run it as one vector.
ORDO_ALWAYS_INLINE float exp_nonpositive(float x) {
  const bool underflow = !(x >= -87.3f);  // NaN stays NaN below
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

struct Problem {
  const float* q;
  int64_t q_batch, q_row;
  const float* k;
  int64_t k_batch, k_head, k_pos;
  const float* v;
  int64_t v_batch, v_head, v_pos;
  const float* mask;  // nullptr: no mask
  int64_t m_batch, m_head, m_row, m_pos;
  float* out;  // [batch, q_len, heads * head_dim], contiguous
  int64_t heads, q_len, kv_len, head_dim;
  float scale;
};

ORDO_ALWAYS_INLINE void run_units(const Problem& p, int64_t begin, int64_t end) {
  const int64_t hd = p.head_dim, padded = (p.kv_len + 15) / 16 * 16;
  std::vector<float> scratch(2 * padded + hd);
  float* scores = scratch.data();
  float* probs = scores + padded;
  float* query = probs + padded;
  const float lowest_half = std::numeric_limits<float>::lowest() / 2;
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t b = unit / p.heads, h = unit % p.heads;
    const float* keys = p.k + b * p.k_batch + h * p.k_head;
    const float* values = p.v + b * p.v_batch + h * p.v_head;
    for (int64_t i = 0; i < p.q_len; ++i) {
      const float* q_row = p.q + b * p.q_batch + i * p.q_row + h * hd;
      float* out = p.out + (b * p.q_len + i) * p.heads * hd + h * hd;
      for (int64_t d = 0; d < hd; ++d) query[d] = q_row[d] * p.scale;
      for (int64_t s = 0; s < p.kv_len; ++s) scores[s] = dot(query, keys + s * p.k_pos, hd);
      if (p.mask) {
        const float* mask = p.mask + b * p.m_batch + h * p.m_head + i * p.m_row;
        for (int64_t s = 0; s < p.kv_len; ++s) scores[s] += mask[s * p.m_pos];
      }
      float top = scores[0];
      for (int64_t s = 1; s < p.kv_len; ++s) top = std::max(top, scores[s]);
      if (top < lowest_half) {  // nothing to attend to: position 0, as when alone
        std::memcpy(out, values, hd * sizeof(float));
        continue;
      }
      for (int64_t s = p.kv_len; s < padded; ++s) scores[s] = -std::numeric_limits<float>::infinity();
      // p_s = exp(s - max) and their sum, position s in lane s % 16 (padding adds +0).
      V16 sum = {};
      for (int64_t s = 0; s < padded; s += 16) {
        for (int j = 0; j < 16; ++j) probs[s + j] = exp_nonpositive(scores[s + j] - top);
        sum += load(probs + s);
      }
      const float inverse = 1.0f / lane_sum(sum);
      // out[d] = sum over s, in order, of p_s v_s[d]; 64 outputs at a time in registers.
      int64_t d0 = 0;
      for (; d0 + 64 <= hd; d0 += 64) {
        V16 o0 = {}, o1 = {}, o2 = {}, o3 = {};
        for (int64_t s = 0; s < p.kv_len; ++s) {
          const float weight = probs[s];
          if (weight == 0.0f) continue;  // a masked position changes nothing, not even a zero's sign
          const float* value = values + s * p.v_pos + d0;
          o0 += weight * load(value);
          o1 += weight * load(value + 16);
          o2 += weight * load(value + 32);
          o3 += weight * load(value + 48);
        }
        store(out + d0, o0 * inverse);
        store(out + d0 + 16, o1 * inverse);
        store(out + d0 + 32, o2 * inverse);
        store(out + d0 + 48, o3 * inverse);
      }
      if (d0 < hd) {  // the rest of the head (every call of a model takes the same path)
        float acc[64] = {};
        const int64_t width = hd - d0;
        for (int64_t s = 0; s < p.kv_len; ++s) {
          const float weight = probs[s];
          if (weight == 0.0f) continue;
          const float* value = values + s * p.v_pos + d0;
          for (int64_t j = 0; j < width; ++j) acc[j] += weight * value[j];
        }
        for (int64_t j = 0; j < width; ++j) out[d0 + j] = acc[j] * inverse;
      }
    }
  }
}

__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"))) void run_units_avx512(
    const Problem& p, int64_t begin, int64_t end) {
  run_units(p, begin, end);
}
__attribute__((target("avx2,fma"))) void run_units_avx2(const Problem& p, int64_t begin, int64_t end) {
  run_units(p, begin, end);
}
void run_units_baseline(const Problem& p, int64_t begin, int64_t end) { run_units(p, begin, end); }

using Kernel = void (*)(const Problem&, int64_t, int64_t);
Kernel pick_kernel() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return run_units_avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return run_units_avx2;
  return run_units_baseline;
}

void check(bool ok, const std::string& what) {
  if (!ok) throw Error("fixed_order_attention: " + what);
}

}  // namespace

at::Tensor fixed_order_attention(const at::Tensor& q_in, const at::Tensor& key_in, const at::Tensor& value_in,
                                 const at::Tensor& additive_mask, int64_t heads, float scale) {
  static const Kernel kernel = pick_kernel();
  check(q_in.dim() == 3 && key_in.dim() == 4 && value_in.dim() == 4, "q must be 3-d, key and value 4-d");
  const int64_t batch = q_in.size(0), q_len = q_in.size(1);
  const int64_t kv_len = key_in.size(2), head_dim = key_in.size(3);
  check(key_in.size(0) == batch && key_in.size(1) == heads && q_in.size(2) == heads * head_dim &&
            value_in.sizes() == key_in.sizes(),
        "shapes do not match");
  const auto unit_stride = [](const at::Tensor& t) {
    at::Tensor f = t.scalar_type() == at::kFloat ? t : t.to(at::kFloat);
    return f.stride(-1) == 1 ? f : f.contiguous();
  };
  const at::Tensor q = unit_stride(q_in), key = unit_stride(key_in), value = unit_stride(value_in);
  at::Tensor out = at::empty({batch, q_len, heads * head_dim}, q.options().dtype(at::kFloat));
  if (out.numel() == 0) return out;
  if (kv_len == 0) return out.zero_();

  Problem p{};
  p.q = q.data_ptr<float>();
  p.q_batch = q.stride(0);
  p.q_row = q.stride(1);
  p.k = key.data_ptr<float>();
  p.k_batch = key.stride(0);
  p.k_head = key.stride(1);
  p.k_pos = key.stride(2);
  p.v = value.data_ptr<float>();
  p.v_batch = value.stride(0);
  p.v_head = value.stride(1);
  p.v_pos = value.stride(2);
  at::Tensor mask;
  if (additive_mask.defined()) {
    mask = additive_mask.to(at::kFloat).expand({batch, heads, q_len, kv_len});
    p.mask = mask.data_ptr<float>();
    p.m_batch = mask.stride(0);
    p.m_head = mask.stride(1);
    p.m_row = mask.stride(2);
    p.m_pos = mask.stride(3);
  }
  p.out = out.data_ptr<float>();
  p.heads = heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.head_dim = head_dim;
  p.scale = scale;
  // A task should hold some ten thousand multiply-adds; how units are split among threads
  // never changes a unit's arithmetic.
  const int64_t work = std::max<int64_t>(1, q_len * kv_len * head_dim);
  at::parallel_for(0, batch * heads, std::max<int64_t>(1, 16384 / work),
                   [&](int64_t begin, int64_t end) { kernel(p, begin, end); });
  return out;
}

}  // namespace ordo::nn
