#include "kernels/fused_rows.h"

#include <cmath>
#include <string>

#include "kernels/lanes.h"
#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::kernels {
namespace {

using namespace lanes;

ORDO_ALWAYS_INLINE void rms_rows(const float* x, const float* w, float eps, int64_t n, float* out, int64_t begin,
                                 int64_t end) {
  const int64_t whole = n / 16 * 16;
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * n;
    float* o = out + r * n;
    V16 squares = {};  // column j in lane j % 16, the tail's missing lanes zero
    for (int64_t s = 0; s < whole; s += 16) {
      const V16 v = load(row + s);
      squares += v * v;
    }
    const V16 tail = load_first(row + whole, n - whole);
    squares += tail * tail;
    const float inverse = 1.0f / std::sqrt(lane_sum(squares) / static_cast<float>(n) + eps);
    const V16 scale = V16{} + inverse;
    for (int64_t s = 0; s < whole; s += 16) store(o + s, load(w + s) * (load(row + s) * scale));
    for (int64_t j = whole; j < n; ++j) o[j] = w[j] * (row[j] * inverse);
  }
}

// Branch-free per element, so that a block of 16 runs as one vector.
ORDO_ALWAYS_INLINE float gelu_tanh(float a) {
  const float u = 0.7978845608028654f * (a + 0.044715f * (a * a * a));
  const float t = exp_nonpositive(-2.0f * std::fabs(u));  // tanh|u| = (1 - t) / (1 + t)
  const float magnitude = (1.0f - t) / (1.0f + t);
  return 0.5f * a * (1.0f + (u < 0.0f ? -magnitude : magnitude));
}
ORDO_ALWAYS_INLINE float silu(float a) {
  const float e = exp_nonpositive(-std::fabs(a));  // sigmoid(a) from exp(-|a|): no overflow
  return a * ((a >= 0.0f ? 1.0f : e) / (1.0f + e));
}
ORDO_ALWAYS_INLINE float relu(float a) { return a < 0.0f ? 0.0f : a; }

template <Activation kAct>
ORDO_ALWAYS_INLINE float activate(float a) {
  if constexpr (kAct == Activation::kGeluTanh) return gelu_tanh(a);
  if constexpr (kAct == Activation::kSilu) return silu(a);
  return relu(a);
}

template <Activation kAct>
ORDO_ALWAYS_INLINE void gated(const float* in, int64_t hidden, float* out, int64_t begin, int64_t end) {
  const int64_t whole = hidden / 16 * 16;
  for (int64_t r = begin; r < end; ++r) {
    const float* a = in + r * 2 * hidden;
    const float* b = a + hidden;
    float* o = out + r * hidden;
    for (int64_t s = 0; s < whole; s += 16)
      for (int j = 0; j < 16; ++j) o[s + j] = activate<kAct>(a[s + j]) * b[s + j];
    for (int64_t j = whole; j < hidden; ++j) o[j] = activate<kAct>(a[j]) * b[j];
  }
}

#define ORDO_FUSED_ROWS_KERNELS(suffix, target)                                                             \
  target void rms_##suffix(const float* x, const float* w, float eps, int64_t n, float* out, int64_t begin, \
                           int64_t end) {                                                                   \
    rms_rows(x, w, eps, n, out, begin, end);                                                                \
  }                                                                                                         \
  target void gated_##suffix(const float* in, int64_t hidden, Activation act, float* out, int64_t begin,    \
                             int64_t end) {                                                                 \
    switch (act) {                                                                                          \
      case Activation::kGeluTanh: gated<Activation::kGeluTanh>(in, hidden, out, begin, end); break;         \
      case Activation::kSilu: gated<Activation::kSilu>(in, hidden, out, begin, end); break;                 \
      default: gated<Activation::kRelu>(in, hidden, out, begin, end); break;                                \
    }                                                                                                       \
  }
ORDO_FUSED_ROWS_KERNELS(avx512, ORDO_TARGET_AVX512)
ORDO_FUSED_ROWS_KERNELS(avx2, ORDO_TARGET_AVX2)
ORDO_FUSED_ROWS_KERNELS(baseline, )
#undef ORDO_FUSED_ROWS_KERNELS

struct Kernels {
  void (*rms)(const float*, const float*, float, int64_t, float*, int64_t, int64_t);
  void (*gated)(const float*, int64_t, Activation, float*, int64_t, int64_t);
};

const Kernels& kernels() {
  static const Kernels picked = pick_for_isa(Kernels{rms_avx512, gated_avx512}, Kernels{rms_avx2, gated_avx2},
                                             Kernels{rms_baseline, gated_baseline});
  return picked;
}

}  // namespace

at::Tensor rms_norm_rows(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (x.scalar_type() != at::kFloat || weight.scalar_type() != at::kFloat || x.dim() < 1 || weight.dim() != 1 ||
      x.size(-1) != weight.size(0) || x.size(-1) == 0)
    throw Error("rms_norm_rows: expects float32 [..., dim] rows and a float32 [dim] weight");
  const at::Tensor in = x.contiguous(), w = weight.contiguous();
  at::Tensor out = at::empty(in.sizes(), in.options());
  const int64_t n = in.size(-1), rows = in.numel() / n;
  const float* xs = in.data_ptr<float>();
  const float* ws = w.data_ptr<float>();
  float* os = out.data_ptr<float>();
  const auto kernel = kernels().rms;
  const float e = static_cast<float>(eps);
  parallel_for(0, rows, grain_for(3 * n), [&](int64_t begin, int64_t end) { kernel(xs, ws, e, n, os, begin, end); });
  return out;
}

bool gated_rows_supported(Activation activation) {
  return activation == Activation::kGeluTanh || activation == Activation::kSilu || activation == Activation::kRelu;
}

at::Tensor gated_rows(const at::Tensor& fused, Activation activation) {
  if (!gated_rows_supported(activation)) throw Error("gated_rows: no kernel for this activation");
  if (fused.scalar_type() != at::kFloat || fused.dim() < 1 || fused.size(-1) % 2 != 0 || fused.size(-1) == 0)
    throw Error("gated_rows: expects float32 [..., 2 x hidden] rows");
  const at::Tensor in = fused.contiguous();
  const int64_t hidden = in.size(-1) / 2, rows = in.numel() / in.size(-1);
  auto sizes = in.sizes().vec();
  sizes.back() = hidden;
  at::Tensor out = at::empty(sizes, in.options());
  const float* is = in.data_ptr<float>();
  float* os = out.data_ptr<float>();
  const auto kernel = kernels().gated;
  parallel_for(0, rows, grain_for(4 * hidden),
               [&](int64_t begin, int64_t end) { kernel(is, hidden, activation, os, begin, end); });
  return out;
}

}  // namespace ordo::kernels
