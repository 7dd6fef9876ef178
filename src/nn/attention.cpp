#include "nn/attention.h"

#include <cmath>
#include <limits>

#include "ordo/error.h"

namespace ordo::nn {

MultiHeadAttention::MultiHeadAttention(int64_t dim, int64_t heads)
    : q_proj(dim, dim), k_proj(dim, dim), v_proj(dim, dim), out_proj(dim, dim),
      num_heads(heads), head_dim(dim / heads) {
  if (heads <= 0 || dim % heads != 0)
    throw Error("d_model " + std::to_string(dim) + " is not divisible by the number of heads " +
                std::to_string(heads));
}

at::Tensor MultiHeadAttention::split_heads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), num_heads, head_dim}).transpose(1, 2);
}

KeyValue MultiHeadAttention::project_key_value(const at::Tensor& x) const {
  return {split_heads(k_proj.forward(x)).contiguous(), split_heads(v_proj.forward(x)).contiguous()};
}

at::Tensor MultiHeadAttention::forward(const at::Tensor& x, const KeyValue& kv,
                                       const at::Tensor& additive_mask) const {
  const int64_t batch = x.size(0), q_len = x.size(1);
  const double scaling = 1.0 / std::sqrt(static_cast<double>(head_dim));
  const at::Tensor q = split_heads(q_proj.forward(x) * scaling);
  at::Tensor scores = at::matmul(q, kv.key.transpose(2, 3));  // [b, h, q, k]
  if (additive_mask.defined()) scores = scores + additive_mask;
  const at::Tensor probs = at::softmax(scores, -1);
  const at::Tensor context = at::matmul(probs, kv.value)  // [b, h, q, head_dim]
                                 .transpose(1, 2)
                                 .reshape({batch, q_len, num_heads * head_dim});
  return out_proj.forward(context);
}

at::Tensor MultiHeadAttention::forward_cached(const at::Tensor& x, KeyValue& cache,
                                              const at::Tensor& additive_mask) const {
  KeyValue fresh = project_key_value(x);
  if (cache.empty()) {
    cache = std::move(fresh);
  } else {
    cache.key = at::cat({cache.key, fresh.key}, 2);
    cache.value = at::cat({cache.value, fresh.value}, 2);
  }
  return forward(x, cache, additive_mask);
}

void MultiHeadAttention::visit(const std::string& prefix, const ParamVisitor& visitor) {
  q_proj.visit(join_name(prefix, "q_proj"), visitor);
  k_proj.visit(join_name(prefix, "k_proj"), visitor);
  v_proj.visit(join_name(prefix, "v_proj"), visitor);
  out_proj.visit(join_name(prefix, "out_proj"), visitor);
}

at::Tensor padding_mask(const at::Tensor& attention_mask) {
  const float lowest = std::numeric_limits<float>::lowest();
  const at::Tensor blocked = attention_mask.eq(0).to(at::kFloat) * lowest;
  return blocked.unsqueeze(1).unsqueeze(1);
}

at::Tensor causal_mask(int64_t q_len, int64_t past_len) {
  if (q_len == 1) return {};
  const float lowest = std::numeric_limits<float>::lowest();
  // Query i (absolute position past_len + i) may see keys 0 .. past_len + i.
  const at::Tensor keys = at::arange(past_len + q_len, at::kLong).unsqueeze(0);
  const at::Tensor queries = at::arange(q_len, at::kLong).unsqueeze(1) + past_len;
  return keys.gt(queries).to(at::kFloat).mul(lowest).unsqueeze(0).unsqueeze(0);
}

}  // namespace ordo::nn
