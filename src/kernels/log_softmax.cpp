#include "kernels/log_softmax.h"

#include <cmath>
#include <limits>
#include <string>

#include "kernels/lanes.h"
#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::kernels {
namespace {

using namespace lanes;

struct RowShift {
  float top;  // the row's maximum
  float lse;  // log(sum exp(x - top))
};

// The row's maximum and log-sum-exp: two reads of the row, no write.
ORDO_ALWAYS_INLINE RowShift row_shift(const float* x, int64_t n) {
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  const int64_t whole = n / 16 * 16;
  float tail[16];
  for (int j = 0; j < 16; ++j) tail[j] = whole + j < n ? x[whole + j] : kLowest;
  V16 tops = load(tail);
  for (int64_t s = 0; s < whole; s += 16) {
    const V16 next = load(x + s);
    tops = tops < next ? next : tops;
  }
  const float top = lane_max(tops);
  // exp(x_j - top), column j in lane j % 16; the padded lanes of the tail add exp(-inf) = +0.
  V16 sum = {};
  float e[16];
  for (int64_t s = 0; s < whole; s += 16) {
    for (int j = 0; j < 16; ++j) e[j] = exp_nonpositive(x[s + j] - top);
    sum += load(e);
  }
  for (int j = 0; j < 16; ++j) e[j] = exp_nonpositive(tail[j] - top);
  sum += load(e);
  return {top, std::log(lane_sum(sum))};
}

ORDO_ALWAYS_INLINE void rows_in_place(float* x, int64_t n, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    float* row = x + r * n;
    const RowShift shift = row_shift(row, n);
    for (int64_t j = 0; j < n; ++j) row[j] = (row[j] - shift.top) - shift.lse;
  }
}

ORDO_ALWAYS_INLINE void rows_at(const float* x, int64_t n, const int64_t* ids, float* out, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const float* row = x + r * n;
    const RowShift shift = row_shift(row, n);
    out[r] = (row[ids[r]] - shift.top) - shift.lse;
  }
}

#define ORDO_LOG_SOFTMAX_KERNELS(suffix, target)                                                                      \
  target void in_place_##suffix(float* x, int64_t n, int64_t begin, int64_t end) { rows_in_place(x, n, begin, end); } \
  target void at_##suffix(const float* x, int64_t n, const int64_t* ids, float* out, int64_t begin, int64_t end) {    \
    rows_at(x, n, ids, out, begin, end);                                                                              \
  }
ORDO_LOG_SOFTMAX_KERNELS(avx512, ORDO_TARGET_AVX512)
ORDO_LOG_SOFTMAX_KERNELS(avx2, ORDO_TARGET_AVX2)
ORDO_LOG_SOFTMAX_KERNELS(baseline, )
#undef ORDO_LOG_SOFTMAX_KERNELS

struct Kernels {
  void (*in_place)(float*, int64_t, int64_t, int64_t);
  void (*at)(const float*, int64_t, const int64_t*, float*, int64_t, int64_t);
};

const Kernels& kernels() {
  static const Kernels picked = pick_for_isa(Kernels{in_place_avx512, at_avx512}, Kernels{in_place_avx2, at_avx2},
                                             Kernels{in_place_baseline, at_baseline});
  return picked;
}

void check_rows(const at::Tensor& x, const char* what) {
  if (x.dim() != 2 || x.scalar_type() != at::kFloat || !x.is_contiguous() || x.size(1) == 0)
    throw Error(std::string(what) + ": expects a contiguous [rows, n > 0] float32 matrix");
}

}  // namespace

void log_softmax_rows_(at::Tensor& x) {
  check_rows(x, "log_softmax_rows_");
  float* data = x.data_ptr<float>();
  const int64_t n = x.size(1);
  const auto kernel = kernels().in_place;
  parallel_for(0, x.size(0), grain_for(4 * n), [&](int64_t begin, int64_t end) { kernel(data, n, begin, end); });
}

at::Tensor log_softmax_at(const at::Tensor& x, const at::Tensor& ids) {
  check_rows(x, "log_softmax_at");
  const at::Tensor picked = ids.to(at::kLong).contiguous();
  if (picked.dim() != 1 || picked.size(0) != x.size(0)) throw Error("log_softmax_at: expects one id per row");
  const int64_t n = x.size(1);
  const int64_t* id = picked.data_ptr<int64_t>();
  for (int64_t r = 0; r < picked.size(0); ++r)
    if (id[r] < 0 || id[r] >= n) throw Error("log_softmax_at: id " + std::to_string(id[r]) + " outside the row");
  at::Tensor out = at::empty({x.size(0)}, at::kFloat);
  const auto kernel = kernels().at;
  const float* data = x.data_ptr<float>();
  float* result = out.data_ptr<float>();
  parallel_for(0, x.size(0), grain_for(2 * n),
               [&](int64_t begin, int64_t end) { kernel(data, n, id, result, begin, end); });
  return out;
}

}  // namespace ordo::kernels
