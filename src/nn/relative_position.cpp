#include "nn/relative_position.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ordo/error.h"

namespace ordo::nn {

int64_t relative_position_bucket(int64_t relative_position, bool bidirectional, int64_t num_buckets,
                                 int64_t max_distance) {
  int64_t bucket = 0;
  int64_t n = relative_position;
  if (bidirectional) {
    num_buckets /= 2;
    if (n > 0) bucket += num_buckets;
    n = n < 0 ? -n : n;
  } else {
    n = n < 0 ? -n : 0;
  }
  const int64_t max_exact = num_buckets / 2;
  if (n < max_exact) return bucket + n;
  // torch: log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact),
  // a float32 tensor op against double scalars (taken as float32), then .to(long) (truncation).
  const float ratio = static_cast<float>(n) / static_cast<float>(max_exact);
  const float scale = static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
  const float scaled = std::log(ratio) / scale * static_cast<float>(num_buckets - max_exact);
  const int64_t large = max_exact + static_cast<int64_t>(std::min(scaled, static_cast<float>(num_buckets)));
  return bucket + std::min(large, num_buckets - 1);
}

RelativePositionBias::RelativePositionBias(int64_t buckets, int64_t max_distance_, int64_t heads, bool bidirectional_)
    : weight(at::empty({buckets, heads}, at::kFloat)),
      num_buckets(buckets),
      max_distance(max_distance_),
      bidirectional(bidirectional_) {}

at::Tensor RelativePositionBias::by_distance(int64_t first, int64_t count) const {
  const at::Tensor table = (weight.scalar_type() == at::kFloat ? weight : weight.to(at::kFloat)).contiguous();
  const int64_t heads = table.size(1);
  at::Tensor out = at::empty({heads, count}, at::kFloat);
  const float* w = table.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t k = 0; k < count; ++k) {
    const int64_t bucket = relative_position_bucket(first + k, bidirectional, num_buckets, max_distance);
    for (int64_t h = 0; h < heads; ++h) o[h * count + k] = w[bucket * heads + h];
  }
  return out;
}

at::Tensor RelativePositionBias::forward(int64_t q_start, int64_t q_len, int64_t kv_len) const {
  // Query i against key s is distance s - (q_start + i): every row is a window of one run of
  // distances, from -(q_start + q_len - 1) to kv_len - 1.
  const int64_t first = -(q_start + q_len - 1);
  const int64_t count = kv_len - first;
  const at::Tensor runs = by_distance(first, count);
  const int64_t heads = runs.size(0);
  at::Tensor out = at::empty({1, heads, q_len, kv_len}, at::kFloat);
  const float* r = runs.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < q_len; ++i)  // key 0 is distance -(q_start + i), index q_len - 1 - i
      std::memcpy(o + (h * q_len + i) * kv_len, r + h * count + (q_len - 1 - i), kv_len * sizeof(float));
  return out;
}

}  // namespace ordo::nn
