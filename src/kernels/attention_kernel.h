// Scaled dot-product attention whose result for one query row does not depend on anything
// else in the batch: not on the other rows, not on how far the keys are padded, not on the
// thread count. LibTorch's matmul/softmax/matmul route does not have that property: its
// softmax sums and the probabilities x values product group their reductions by the padded
// length (vector width, BLAS K-blocking, a naive loop below 400 multiply-adds, OpenBLAS's
// "small matrix" kernels above), so a sentence padded next to a longer one gets scores
// that differ in the last bits, and sometimes another token.
//
// Here each (row, head, query) is computed alone, in a fixed order:
//   scores s = (q * scale) . k_s   over head_dim, in one of two fixed orders (ScoreOrder);
//   p_s = exp(s - max)             one polynomial for every element (no scalar tail);
//   sum = sum p_s                  in 16 lanes by position (a masked position adds +0);
//   out = (sum_s p_s v_s) / sum    in position order, positions with p_s = 0 skipped,
//                                  vectorized over head_dim.
// A masked (padded) position has p_s = 0 exactly, so padding changes no bit. It is also
// faster than the LibTorch route at decoding shapes (no batched BLAS calls of a few
// hundred multiply-adds, no intermediate tensors, no head transposes).
#pragma once

#include <cstdint>

#include <ATen/ATen.h>

namespace ordo::kernels {

// How a score q . k is summed. Each order is fixed (the same for every query and key, whatever
// the batch, padding or thread count); a call site keeps one order, so its results stay
// batch-invariant.
enum class ScoreOrder {
  // Over head_dim in 16-lane blocks, the lanes summed by a fixed tree: keys stay as they are
  // stored ([.., length, head_dim], one key per row), the layout a growing cache appends to.
  kDimensionTree,
  // One multiply-add chain per score, d = 0, 1, ..., head_dim - 1, 16 keys side by side in a
  // vector: no horizontal sums, for many queries over the same keys (encoder self-attention,
  // cross-attention of a beam's queries). Reads the keys by dimension ([.., head_dim, length]): a key tensor laid out
  // so (keys_by_dimension) is read in place, another is transposed first.
  kKeyChain,
};

// softmax(q k^T * scale + position_bias + additive_mask) v for every head.
//   q:     [batch, q_len, heads * head_dim], unit stride in the last dimension (a view into
//          a fused projection is fine);
//   key, value: [batch, heads, kv_len, head_dim], value with unit stride in the last dimension;
//   additive_mask: undefined, or broadcastable to [batch, heads, q_len, kv_len]: 0 where
//          allowed, a large negative number (padding_mask, causal_mask) where not.
//   position_bias: undefined, or broadcastable to [batch, heads, q_len, kv_len] (T5's relative
//          position bias, [1, heads, q_len, kv_len]), added to each score before the mask: a second
//          input so that the mask and the bias, broadcast along different dimensions, are never
//          summed into one batch x heads x q_len x kv_len tensor.
//   rows: undefined, or int32 [batch, >= kv_len] (unit stride along positions), with
//          ScoreOrder::kDimensionTree only: position s of query row b reads its key and value
//          from batch row rows[b][s] (a beam search cache whose hypotheses share their parents'
//          positions instead of copying them: KeyValue::origin). The arithmetic is the same.
// Returns [batch, q_len, heads * head_dim], contiguous. A query row that sees no position
// at all (every key masked: an empty source) attends to position 0 alone, which is what it
// gets when it is translated by itself (one padding position).
// Inference only (no autograd). float32.
at::Tensor fixed_order_attention(const at::Tensor& q, const at::Tensor& key, const at::Tensor& value,
                                 const at::Tensor& additive_mask, int64_t heads, float scale,
                                 ScoreOrder order = ScoreOrder::kDimensionTree,
                                 const at::Tensor& position_bias = at::Tensor(), const at::Tensor& rows = at::Tensor());

// `key` [batch, heads, length, head_dim] as a view of a [batch, heads, head_dim, length] tensor
// (unit stride along length): the layout ScoreOrder::kKeyChain reads without a copy. Returns
// `key` itself when it is laid out so already (is_by_dimension).
at::Tensor keys_by_dimension(const at::Tensor& key);
bool is_by_dimension(const at::Tensor& key);

}  // namespace ordo::kernels
