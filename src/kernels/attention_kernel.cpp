#include "kernels/attention_kernel.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/lanes.h"
#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::kernels {
namespace {

using namespace lanes;

// ScoreOrder::kDimensionTree: the scores of G queries with 16 keys (key j at keys[j]; scores
// of query g to out[g][0, 16)). Each q . k over n elements (the head dimension: the same
// for every call of a model): blocks of 64 go to four accumulators, the blocks of 16 left to the
// first ones in turn and a final partial block to the last; then (acc0 + acc1) + (acc2 + acc3)
// and its 16 lanes summed by lane_sum()'s tree. Each key is loaded once for the G queries, and
// the tree runs for all 16 keys together, each of its levels one two-source shuffle pair and one
// vector add instead of 15 scalar adds per key.
// Keys from `valid` on (a last, partial block) are not read and score 0: each key's lane of the
// tree depends on that key alone, so the others' scores are the same bits as in a full block.
template <int G>
ORDO_ALWAYS_INLINE void dot16(const float* const* queries, const float* const* keys, int64_t n, float* const* out,
                              int64_t valid = 16) {
  V16 x[G][16];
  for (int j = 0; j < 16; ++j) {
    if (j >= valid) {
      for (int g = 0; g < G; ++g) x[g][j] = V16{};
      continue;
    }
    const float* b = keys[j];  // loaded once for the G queries
    for (int g = 0; g < G; ++g) {
      const float* q = queries[g];
      V16 acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
      int64_t d = 0;
      for (; d + 64 <= n; d += 64) {
        acc0 += load(q + d) * load(b + d);
        acc1 += load(q + d + 16) * load(b + d + 16);
        acc2 += load(q + d + 32) * load(b + d + 32);
        acc3 += load(q + d + 48) * load(b + d + 48);
      }
      if (d + 16 <= n) {
        acc0 += load(q + d) * load(b + d);
        d += 16;
      }
      if (d + 16 <= n) {
        acc1 += load(q + d) * load(b + d);
        d += 16;
      }
      if (d + 16 <= n) {
        acc2 += load(q + d) * load(b + d);
        d += 16;
      }
      if (d < n) acc3 += load_first(q + d, n - d) * load_first(b + d, n - d);
      x[g][j] = (acc0 + acc1) + (acc2 + acc3);
    }
  }
  for (int g = 0; g < G; ++g) {
    // Level 1, a_i = l_i + l_(i+8): keys 2t, 2t+1 -> lanes 0-7, 8-15.
    V16 s1[8];
    for (int t = 0; t < 8; ++t)
      s1[t] = __builtin_shufflevector(x[g][2 * t], x[g][2 * t + 1], 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22,
                                      23) +
              __builtin_shufflevector(x[g][2 * t], x[g][2 * t + 1], 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28,
                                      29, 30, 31);
    // Level 2, (a_i + a_(i+4)) for i < 4: four keys, four lanes each.
    V16 s2[4];
    for (int u = 0; u < 4; ++u)
      s2[u] =
          __builtin_shufflevector(s1[2 * u], s1[2 * u + 1], 0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27) +
          __builtin_shufflevector(s1[2 * u], s1[2 * u + 1], 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
    // Level 3, ((a0 + a4) + (a2 + a6)) and ((a1 + a5) + (a3 + a7)): eight keys, two lanes each.
    V16 s3[2];
    for (int v = 0; v < 2; ++v)
      s3[v] =
          __builtin_shufflevector(s2[2 * v], s2[2 * v + 1], 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29) +
          __builtin_shufflevector(s2[2 * v], s2[2 * v + 1], 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
    // Level 4, the two halves added: lane j = key j.
    store(out[g], __builtin_shufflevector(s3[0], s3[1], 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30) +
                      __builtin_shufflevector(s3[0], s3[1], 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31));
  }
}

// ScoreOrder::kKeyChain: the scores of G queries with `width` (<= 16) keys side by side, key j
// at keys[d * dim_stride + j] for dimension d, into out[g][0, 16) (lanes past `width` get 0):
// per score one chain acc = acc + q_d k_d over d = 0, 1, ..., n - 1 (a fused multiply-add
// where the instruction set has one). Blocks of 32 keys share each query element's broadcast.
template <int G>
ORDO_ALWAYS_INLINE void chain16(const float* const* queries, const float* keys, int64_t dim_stride, int64_t n,
                                int64_t width, float* const* out) {
  V16 acc[G] = {};
  if (width == 16) {
    for (int64_t d = 0; d < n; ++d) {
      const V16 k = load(keys + d * dim_stride);
      for (int g = 0; g < G; ++g) acc[g] += queries[g][d] * k;
    }
  } else {
    for (int64_t d = 0; d < n; ++d) {
      const V16 k = load_first(keys + d * dim_stride, width);
      for (int g = 0; g < G; ++g) acc[g] += queries[g][d] * k;
    }
  }
  for (int g = 0; g < G; ++g) store(out[g], acc[g]);
}

// The same for 17-32 keys: two chains side by side, whose latencies overlap (one query's
// chain over 16 keys waits on each multiply-add in turn). Keys from `width` on score 0.
template <int G>
ORDO_ALWAYS_INLINE void chain32(const float* const* queries, const float* keys, int64_t dim_stride, int64_t n,
                                float* const* out, int64_t width = 32) {
  V16 lo[G] = {}, hi[G] = {};
  for (int64_t d = 0; d < n; ++d) {
    const V16 k0 = load(keys + d * dim_stride);
    const V16 k1 = width == 32 ? load(keys + d * dim_stride + 16) : load_first(keys + d * dim_stride + 16, width - 16);
    for (int g = 0; g < G; ++g) {
      const float q = queries[g][d];
      lo[g] += q * k0;
      hi[g] += q * k1;
    }
  }
  for (int g = 0; g < G; ++g) {
    store(out[g], lo[g]);
    store(out[g] + 16, hi[g]);
  }
}

template <int G>
ORDO_ALWAYS_INLINE void chain_scores(const float* const* queries, const float* keys, int64_t dim_stride, int64_t n,
                                     int64_t kv_len, float* const* scores) {
  float* at[G];
  int64_t s = 0;
  for (; s + 32 <= kv_len; s += 32) {
    for (int g = 0; g < G; ++g) at[g] = scores[g] + s;
    chain32<G>(queries, keys + s, dim_stride, n, at);
  }
  if (kv_len - s > 16) {
    for (int g = 0; g < G; ++g) at[g] = scores[g] + s;
    chain32<G>(queries, keys + s, dim_stride, n, at, kv_len - s);
    return;
  }
  if (s < kv_len) {
    for (int g = 0; g < G; ++g) at[g] = scores[g] + s;
    chain16<G>(queries, keys + s, dim_stride, n, kv_len - s, at);
  }
}

struct Problem {
  const float* q;
  int64_t q_batch, q_row;
  const float* k;
  int64_t k_batch, k_head, k_pos;
  bool key_chain;  // ScoreOrder::kKeyChain: k_pos == 1, dimension d of a key at k + d * k_dim
  int64_t k_dim;
  const float* v;
  int64_t v_batch, v_head, v_pos;
  const int32_t* rows;  // nullptr: none; else position s of batch row b reads key/value row rows[b * rows_row + s]
  int64_t rows_row;
  const float* mask;  // nullptr: no mask
  int64_t m_batch, m_head, m_row, m_pos;
  const float* bias;  // nullptr: no position bias
  int64_t b_batch, b_head, b_row, b_pos;
  float* out;  // [batch, q_len, heads * head_dim], contiguous
  int64_t heads, q_len, kv_len, head_dim;
  float scale;
};

// out_g[d0, d0 + 64) = sum over s, in order, of probs_g[s] v_s (then times inverse_g), for G
// queries of one (sentence, head) at once: each value row is loaded once for the G queries
// (the grouped rows of a beam, or the queries of a source), and each query's accumulation is
// the one a query alone gets, operation for operation.
template <int G>
ORDO_ALWAYS_INLINE void weighted_values_64(const Problem& p, const float* const* values, int64_t d0,
                                           float* const* probs, const float* inverse, float* const* out) {
  V16 o[G][4] = {};
  for (int64_t s = 0; s < p.kv_len; ++s) {
    const float* value = values[s] + d0;
    const V16 v0 = load(value), v1 = load(value + 16), v2 = load(value + 32), v3 = load(value + 48);
    for (int g = 0; g < G; ++g) {
      const float weight = probs[g][s];
      if (weight == 0.0f) continue;  // a masked position changes nothing, not even a zero's sign
      o[g][0] += weight * v0;
      o[g][1] += weight * v1;
      o[g][2] += weight * v2;
      o[g][3] += weight * v3;
    }
  }
  for (int g = 0; g < G; ++g) {
    if (!out[g]) continue;
    store(out[g] + d0, o[g][0] * inverse[g]);
    store(out[g] + d0 + 16, o[g][1] * inverse[g]);
    store(out[g] + d0 + 32, o[g][2] * inverse[g]);
    store(out[g] + d0 + 48, o[g][3] * inverse[g]);
  }
}

// Queries of one (sentence, head) taken together: 8 share each key load of the key chain's
// scoring; the dimension tree's scoring and the weighted values take them 4 at a time.
constexpr int kQueryBlock = 8;
constexpr int kHalfBlock = kQueryBlock / 2;

ORDO_ALWAYS_INLINE void run_units(const Problem& p, int64_t begin, int64_t end) {
  const int64_t hd = p.head_dim, padded = (p.kv_len + 15) / 16 * 16;
  std::vector<float> scratch(2 * kQueryBlock * padded + kQueryBlock * hd);
  // Where each position's key (kDimensionTree) and value are: one row of the cache, or with
  // Problem::rows the row it names, so that a beam reorder moves no keys or values.
  std::vector<const float*> key_at(p.key_chain ? 0 : padded), value_at(p.kv_len);
  float* scores_block = scratch.data();
  float* probs_block = scores_block + kQueryBlock * padded;
  float* query_block = probs_block + kQueryBlock * padded;
  const float lowest_half = std::numeric_limits<float>::lowest() / 2;
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t b = unit / p.heads, h = unit % p.heads;
    const float* keys = p.k + b * p.k_batch + h * p.k_head;
    const float* values = p.v + b * p.v_batch + h * p.v_head;
    const int32_t* rows = p.rows ? p.rows + b * p.rows_row : nullptr;
    for (int64_t s = 0; s < p.kv_len; ++s) {
      const int64_t from = rows ? rows[s] - b : 0;  // how many rows away this position is read
      value_at[s] = values + from * p.v_batch + s * p.v_pos;
      if (!p.key_chain) key_at[s] = keys + from * p.k_batch + s * p.k_pos;
    }
    for (int64_t i0 = 0; i0 < p.q_len; i0 += kQueryBlock) {
      const int count = static_cast<int>(std::min<int64_t>(kQueryBlock, p.q_len - i0));
      float* probs[kQueryBlock] = {};
      float* outs[kQueryBlock] = {};
      float inverse[kQueryBlock] = {};
      // Scores of the block's queries, the keys loaded once for all of them.
      float* queries[kQueryBlock] = {};
      float* scores_of[kQueryBlock] = {};
      for (int g = 0; g < count; ++g) {
        const float* q_row = p.q + b * p.q_batch + (i0 + g) * p.q_row + h * hd;
        queries[g] = query_block + g * hd;
        scores_of[g] = scores_block + g * padded;
        for (int64_t d = 0; d < hd; ++d) queries[g][d] = q_row[d] * p.scale;
      }
      if (p.key_chain) {
        switch (count) {
          case 1: chain_scores<1>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
          case 2: chain_scores<2>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
          case 3: chain_scores<3>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
          case 4: chain_scores<4>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
          case 5: chain_scores<5>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
          case 6: chain_scores<6>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
          case 7: chain_scores<7>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
          default: chain_scores<8>(queries, keys, p.k_dim, hd, p.kv_len, scores_of); break;
        }
      } else {
        for (int half = 0; half < count; half += kHalfBlock) {
          const int n = std::min(kHalfBlock, count - half);
          float* const* q_half = queries + half;
          for (int64_t s16 = 0; s16 < p.kv_len; s16 += 16) {  // the last block may be partial
            float* at[kHalfBlock];
            for (int g = 0; g < kHalfBlock; ++g) at[g] = scores_of[half + g] ? scores_of[half + g] + s16 : nullptr;
            const float* const* block = key_at.data() + s16;
            const int64_t valid = std::min<int64_t>(16, p.kv_len - s16);
            switch (n) {
              case 1: dot16<1>(q_half, block, hd, at, valid); break;
              case 2: dot16<2>(q_half, block, hd, at, valid); break;
              case 3: dot16<3>(q_half, block, hd, at, valid); break;
              default: dot16<4>(q_half, block, hd, at, valid); break;
            }
          }
        }
      }
      for (int g = 0; g < count; ++g) {
        const int64_t i = i0 + g;
        float* out = p.out + (b * p.q_len + i) * p.heads * hd + h * hd;
        float* scores = scores_of[g];
        probs[g] = probs_block + g * padded;
        if (p.bias) {  // before the mask, as Hugging Face's T5 adds (bias + mask): the same where mask = 0
          const float* bias = p.bias + b * p.b_batch + h * p.b_head + i * p.b_row;
          if (p.b_pos == 1) {  // the bias as RelativePositionBias builds it: one vector pass
            int64_t s = 0;
            for (; s + 16 <= p.kv_len; s += 16) store(scores + s, load(scores + s) + load(bias + s));
            for (; s < p.kv_len; ++s) scores[s] += bias[s];
          } else {
            for (int64_t s = 0; s < p.kv_len; ++s) scores[s] += bias[s * p.b_pos];
          }
        }
        if (p.mask) {
          const float* mask = p.mask + b * p.m_batch + h * p.m_head + i * p.m_row;
          for (int64_t s = 0; s < p.kv_len; ++s) scores[s] += mask[s * p.m_pos];
        }
        for (int64_t s = p.kv_len; s < padded; ++s) scores[s] = -std::numeric_limits<float>::infinity();
        // The largest score, 16 lanes at a time (a maximum does not depend on the order).
        V16 tops = load(scores);
        for (int64_t s = 16; s < padded; s += 16) {
          const V16 next = load(scores + s);
          tops = tops < next ? next : tops;
        }
        const float top = lane_max(tops);
        if (top < lowest_half) {  // nothing to attend to: position 0, as when alone
          std::memcpy(out, value_at[0], hd * sizeof(float));
          std::fill(probs[g], probs[g] + padded, 0.0f);  // contributes nothing below; not stored
          continue;
        }
        outs[g] = out;
        // p_s = exp(s - max) and their sum, position s in lane s % 16 (padding adds +0).
        V16 sum = {};
        for (int64_t s = 0; s < padded; s += 16) {
          for (int j = 0; j < 16; ++j) probs[g][s + j] = exp_nonpositive(scores[s + j] - top);
          sum += load(probs[g] + s);
        }
        inverse[g] = 1.0f / lane_sum(sum);
      }
      // out[d] = sum over s, in order, of p_s v_s[d]; 64 outputs of each query at a time.
      int64_t d0 = 0;
      for (; d0 + 64 <= hd; d0 += 64) {
        for (int half = 0; half < count; half += kHalfBlock) {
          float* const* p_half = probs + half;
          float* const* o_half = outs + half;
          switch (std::min(kHalfBlock, count - half)) {
            case 1: weighted_values_64<1>(p, value_at.data(), d0, p_half, inverse + half, o_half); break;
            case 2: weighted_values_64<2>(p, value_at.data(), d0, p_half, inverse + half, o_half); break;
            case 3: weighted_values_64<3>(p, value_at.data(), d0, p_half, inverse + half, o_half); break;
            default: weighted_values_64<4>(p, value_at.data(), d0, p_half, inverse + half, o_half); break;
          }
        }
      }
      if (d0 < hd) {  // the rest of the head (every call of a model takes the same path)
        for (int g = 0; g < count; ++g) {
          if (!outs[g]) continue;
          float acc[64] = {};
          const int64_t width = hd - d0;
          for (int64_t s = 0; s < p.kv_len; ++s) {
            const float weight = probs[g][s];
            if (weight == 0.0f) continue;
            const float* value = value_at[s] + d0;
            for (int64_t j = 0; j < width; ++j) acc[j] += weight * value[j];
          }
          for (int64_t j = 0; j < width; ++j) outs[g][d0 + j] = acc[j] * inverse[g];
        }
      }
    }
  }
}

ORDO_TARGET_AVX512 void run_units_avx512(const Problem& p, int64_t begin, int64_t end) { run_units(p, begin, end); }
ORDO_TARGET_AVX2 void run_units_avx2(const Problem& p, int64_t begin, int64_t end) { run_units(p, begin, end); }
void run_units_baseline(const Problem& p, int64_t begin, int64_t end) { run_units(p, begin, end); }

using Kernel = void (*)(const Problem&, int64_t, int64_t);
Kernel pick_kernel() { return pick_for_isa<Kernel>(run_units_avx512, run_units_avx2, run_units_baseline); }

void check(bool ok, const std::string& what) {
  if (!ok) throw Error("fixed_order_attention: " + what);
}

}  // namespace

bool is_by_dimension(const at::Tensor& key) {
  return key.dim() == 4 && key.stride(2) == 1 && key.stride(3) >= key.size(2);
}

at::Tensor keys_by_dimension(const at::Tensor& key) {
  check(key.dim() == 4, "keys must be 4-d");
  if (is_by_dimension(key)) return key;
  // Rows of whole vectors, and never a multiple of 1 KB apart: the key chain reads a block of
  // keys in every one of head_dim rows, and rows 2 KB apart (512 positions) all fall into the
  // same few sets of the L1 cache, which then misses on every load.
  const int64_t length = key.size(2);
  int64_t row = (length + 15) / 16 * 16;
  if (row % 256 == 0) row += 16;
  at::Tensor by_dimension = at::empty({key.size(0), key.size(1), key.size(3), row}, key.options());
  by_dimension = by_dimension.narrow(3, 0, length);
  by_dimension.copy_(key.transpose(2, 3));
  return by_dimension.transpose(2, 3);
}

at::Tensor fixed_order_attention(const at::Tensor& q_in, const at::Tensor& key_in, const at::Tensor& value_in,
                                 const at::Tensor& additive_mask, int64_t heads, float scale, ScoreOrder order,
                                 const at::Tensor& position_bias, const at::Tensor& rows) {
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
  const bool key_chain = order == ScoreOrder::kKeyChain;
  const at::Tensor q = unit_stride(q_in), value = unit_stride(value_in);
  const at::Tensor key = key_chain ? keys_by_dimension(key_in.to(at::kFloat)) : unit_stride(key_in);
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
  p.key_chain = key_chain;
  p.k_dim = key.stride(3);
  p.v = value.data_ptr<float>();
  p.v_batch = value.stride(0);
  p.v_head = value.stride(1);
  p.v_pos = value.stride(2);
  if (rows.defined()) {
    check(!key_chain && rows.scalar_type() == at::kInt && rows.dim() == 2 && rows.size(0) == batch &&
              rows.size(1) >= kv_len && rows.stride(1) == 1,
          "rows must be int32 [batch, >= kv_len] with unit stride, and only with kDimensionTree");
    p.rows = rows.data_ptr<int32_t>();
    p.rows_row = rows.stride(0);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < kv_len; ++s) {
        const int32_t r = p.rows[b * p.rows_row + s];
        check(r >= 0 && r < batch, "rows names row " + std::to_string(r) + " of " + std::to_string(batch));
      }
  }
  at::Tensor mask;
  if (additive_mask.defined()) {
    mask = additive_mask.to(at::kFloat).expand({batch, heads, q_len, kv_len});
    p.mask = mask.data_ptr<float>();
    p.m_batch = mask.stride(0);
    p.m_head = mask.stride(1);
    p.m_row = mask.stride(2);
    p.m_pos = mask.stride(3);
  }
  at::Tensor bias;
  if (position_bias.defined()) {
    bias = position_bias.to(at::kFloat).expand({batch, heads, q_len, kv_len});
    p.bias = bias.data_ptr<float>();
    p.b_batch = bias.stride(0);
    p.b_head = bias.stride(1);
    p.b_row = bias.stride(2);
    p.b_pos = bias.stride(3);
  }
  p.out = out.data_ptr<float>();
  p.heads = heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.head_dim = head_dim;
  p.scale = scale;
  // A unit is one (sentence, head): scores and weighted values, 2 * q_len * kv_len * head_dim
  // multiply-adds (kernels/parallel.h: how large a task must be to be worth a thread),
  // claimed by whichever thread is free (a decoding step's units are all the same size).
  parallel_claim(0, batch * heads, grain_for(2 * q_len * kv_len * head_dim),
                 [&](int64_t begin, int64_t end) { kernel(p, begin, end); });
  return out;
}

}  // namespace ordo::kernels
