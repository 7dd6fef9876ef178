// T5's relative position bias: no position is added to the embeddings; instead every
// self-attention logit gets a learned scalar per head that depends only on the distance
// between key and query, looked up through a bucket. Small distances have a bucket each, larger
// ones share logarithmically wider buckets up to max_distance, beyond which all fall into the
// last. The encoder's buckets are bidirectional (half of them for keys after the query), the
// decoder's causal (only keys at or before the query). One table per stack (Hugging Face keeps
// it in block 0), added to the self-attention of every layer of that stack.
#pragma once

#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "nn/module.h"

namespace ordo::nn {

// Hugging Face's T5Attention._relative_position_bucket for one distance
// `relative_position` = key position - query position, computed as torch computes it (the log
// in float32, truncated). Bidirectional: buckets [0, num_buckets/2) for keys at or before the
// query, [num_buckets/2, num_buckets) after it, each half with num_buckets/4 exact distances.
// Causal: keys after the query share bucket 0, num_buckets/2 exact distances. Requires
// num_buckets >= 4 and max_distance > num_buckets / 2 (io/model_config.cpp checks both).
int64_t relative_position_bucket(int64_t relative_position, bool bidirectional, int64_t num_buckets,
                                 int64_t max_distance);

struct RelativePositionBias {
  at::Tensor weight;  // [num_buckets, heads]: relative_attention_bias.weight
  int64_t num_buckets = 0;
  int64_t max_distance = 0;
  bool bidirectional = true;

  RelativePositionBias() = default;
  RelativePositionBias(int64_t buckets, int64_t max_distance, int64_t heads, bool bidirectional);
  bool defined() const { return weight.defined(); }

  // The bias of queries at positions q_start .. q_start + q_len - 1 against keys 0 .. kv_len - 1,
  // [1, heads, q_len, kv_len] float32: what T5 adds to the attention logits (the cached decoder's
  // new positions against everything cached, as compute_bias(...)[:, :, -q_len:, :]).
  at::Tensor forward(int64_t q_start, int64_t q_len, int64_t kv_len) const;
  // Per head against the distances first .. first + count - 1: [heads, count] (the picture of
  // `ordo positions`).
  at::Tensor by_distance(int64_t first, int64_t count) const;
};

}  // namespace ordo::nn
